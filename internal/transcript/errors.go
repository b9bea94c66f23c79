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
