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

package transcriptstore

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, transcript.ErrorBody{Error: transcript.ErrorDetail{Type: typ, Message: msg}})
}

// writeStoreError maps store errors onto statuses and error types.
func writeStoreError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, transcript.ErrNotFound):
		writeError(w, http.StatusNotFound, transcript.ErrTypeNotFound, err.Error())
	case errors.Is(err, transcript.ErrInvalid):
		writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, err.Error())
	case errors.Is(err, transcript.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, transcript.ErrTypeUnavailable, err.Error())
	case errors.Is(err, transcript.ErrFull):
		writeError(w, http.StatusInsufficientStorage, transcript.ErrTypeFull, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, transcript.ErrTypeInternal, err.Error())
	}
}

// methodNotAllowed answers 405 with the Allow header.
func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, transcript.ErrTypeMethodNotAllowed, "method not allowed; use "+allow)
}
