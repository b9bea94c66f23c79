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
	"fmt"
	"strings"
)

// Error types, for Error.Type.
const (
	ErrRateLimited       = "rate_limited"
	ErrServer            = "server"
	ErrAuth              = "auth"
	ErrBadRequest        = "bad_request"
	ErrMalformedResponse = "malformed_response"
	ErrTimeout           = "timeout"
	ErrConnection        = "connection"
	// ErrEgress: the operator's egress policy refused the destination; never retried.
	ErrEgress = "egress_refused"
)

// Error is a failed model call. When Complete returns one, the retries
// Config.MaxRetries allows are already spent (or the failure is terminal), so
// callers show Message and stop.
type Error struct {
	Provider   string
	StatusCode int // HTTP status, 0 when no response arrived
	Type       string
	// Message is a sanitized reason: an error code the provider gave or the HTTP status
	// text, never the remote body itself.
	Message   string
	Retryable bool
	// Model is the model a refused request (bad_request: 404 unknown model, 400 invalid)
	// asked for, so that the failure names it: a spawn's model override is not checked
	// before the provider sees it.
	Model string
	// Err is the underlying cause, if any (e.g. context.DeadlineExceeded).
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	b.WriteString(e.Type)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Model != "" {
		fmt.Fprintf(&b, " for model %q", e.Model)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }
