package transcript

import (
	"encoding/json"
	"errors"
	"net/http"
)

// Error types of the JSON error body {"error":{"type":...,"message":...}}.
const (
	ErrTypeNotFound         = "not_found"
	ErrTypeInvalidRequest   = "invalid_request"
	ErrTypeUnauthorized     = "unauthorized"
	ErrTypeForbidden        = "forbidden"
	ErrTypeMethodNotAllowed = "method_not_allowed"
	ErrTypeUnavailable      = "unavailable"
	ErrTypeInternal         = "internal"
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

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, ErrorBody{Error: ErrorDetail{Type: typ, Message: msg}})
}

// writeStoreError maps store errors onto statuses and error types.
func writeStoreError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, ErrTypeNotFound, err.Error())
	case errors.Is(err, ErrInvalid):
		writeError(w, http.StatusBadRequest, ErrTypeInvalidRequest, err.Error())
	case errors.Is(err, ErrClosed):
		writeError(w, http.StatusServiceUnavailable, ErrTypeUnavailable, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, ErrTypeInternal, err.Error())
	}
}

// methodNotAllowed answers 405 with the Allow header.
func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, ErrTypeMethodNotAllowed, "method not allowed; use "+allow)
}
