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

package sessiontools

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ForbiddenError is a refusal a tool decides itself (visibility, the send policy, a guard):
// every tool and door reports it as forbidden, as the API server's 403, which it also is
// to doors that map API errors to HTTP codes.
type ForbiddenError struct{ Why string }

func (e ForbiddenError) Error() string { return e.Why }

// Status makes the refusal an API status (403 Forbidden).
func (e ForbiddenError) Status() metav1.Status {
	return metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: e.Why}
}

// IsForbidden says err is a refusal: a ForbiddenError, or the API server's or the access
// layer's 403.
func IsForbidden(err error) bool { return apierrors.IsForbidden(err) }

// Refusal is the result of a create the API server refused, or nil for an error that is
// no refusal (a lost connection, a timeout): those stay errors of the call. A 403 (RBAC,
// or a policy the webhook applies) is forbidden; a 422 or 400 (the arguments: a model not
// allowed, mode session without thread, a bad attachment, an unknown session) is error,
// which the caller can fix by calling again with other arguments.
func Refusal(err error) *StatusResult {
	switch {
	case apierrors.IsForbidden(err):
		return &StatusResult{Status: StatusForbidden, Error: err.Error()}
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsRequestEntityTooLargeError(err):
		return &StatusResult{Status: StatusError, Error: err.Error()}
	}
	return nil
}

// Refused says a tool's result reports a refusal or a failure (status forbidden, error or not_found),
// which MCP and the model see flagged as an error result.
func Refused(out any) bool {
	var st string
	switch r := out.(type) {
	case *StatusResult:
		if r == nil {
			return false
		}
		st = r.Status
	case StatusResult:
		st = r.Status
	default:
		return false
	}
	return st == StatusForbidden || st == StatusError || st == StatusNotFound
}
