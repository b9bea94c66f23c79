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

package transcript

// Error types of the JSON error body {"error":{"type":...,"message":...}}.
const (
	ErrTypeNotFound         = "not_found"
	ErrTypeInvalidRequest   = "invalid_request"
	ErrTypeUnauthorized     = "unauthorized"
	ErrTypeForbidden        = "forbidden"
	ErrTypeMethodNotAllowed = "method_not_allowed"
	ErrTypeUnavailable      = "unavailable"
	ErrTypeInternal         = "internal"
	ErrTypeTooManyStreams   = "too_many_streams"
	ErrTypeTooManyRequests  = "too_many_requests"
	ErrTypeFull             = "full"
)

// ErrorBody is the JSON shape of every error response of both APIs.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong.
type ErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}
