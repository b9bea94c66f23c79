// Copyright 2026 The agent-session-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package provider

import (
	"context"
	"time"
)

// Retry tells an observer about a model call that is being retried, or that ended after
// retries (Done). The turn engine shows it on the session (ModelRetrying) so a person sees
// why a turn is slow instead of a silent Running.
type Retry struct {
	Provider string
	// Attempt is the attempt about to start (2 for the first retry); with Done, the last one.
	Attempt int
	// Class is the failed attempt's Error.Type (timeout, rate_limited, server, connection).
	Class      string
	StatusCode int
	// Wait is the pause before the attempt.
	Wait time.Duration
	// Done marks the end of a call that was retried: Err nil means it succeeded at last.
	Done bool
	// Err is the failed attempt's error (sanitized, see Error.Message).
	Err error
}

type retryObserverKey struct{}

// WithRetryObserver returns a ctx whose model calls report retries to f. f is called on the
// calling goroutine, so it must not block for long.
func WithRetryObserver(ctx context.Context, f func(Retry)) context.Context {
	return context.WithValue(ctx, retryObserverKey{}, f)
}

func retryObserverFrom(ctx context.Context) func(Retry) {
	if f, ok := ctx.Value(retryObserverKey{}).(func(Retry)); ok && f != nil {
		return f
	}
	return func(Retry) {}
}
