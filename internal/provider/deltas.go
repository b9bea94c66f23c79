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
	"io"
)

type textDeltasKey struct{}

// WithTextDeltas returns a ctx whose streamed model calls hand each piece of reply text to f
// as it arrives, for a live view of the reply; the Response still carries the whole text.
// f is called on the decoding goroutine, so it must not block. A retried attempt streams its
// text again from the start.
func WithTextDeltas(ctx context.Context, f func(text string)) context.Context {
	return context.WithValue(ctx, textDeltasKey{}, f)
}

func textDeltasFrom(ctx context.Context) func(string) {
	if f, ok := ctx.Value(textDeltasKey{}).(func(string)); ok {
		return f
	}
	return nil
}

// streamDecoder is a provider's stream decoder; onText (nil: none) sees each text delta.
type streamDecoder func(body io.Reader, onText func(string)) (*Response, error)

// emit hands text to onText when both are there.
func emit(onText func(string), text string) {
	if onText != nil && text != "" {
		onText(text)
	}
}
