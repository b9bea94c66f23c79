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

package mcpserver

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
)

// HostAllowed refuses a request whose Host, or Origin when sent, is not local or allowed, as
// /mcp does.
func (o Options) HostAllowed(r *http.Request) bool { return hostAllowed(r, o.AllowedHosts) }

// ActionCall admits r as a console action the way /mcp admits a call: an authenticated
// caller with the right to list the namespace's sessions, within the caller's rate. It
// returns the call to act through as that caller, or the HTTP status and error to answer
// with (a 401 also sets WWW-Authenticate).
func (o Options) ActionCall(w http.ResponseWriter, r *http.Request) (*sessiontools.Call, int, error) {
	return o.ActionCallIn(w, r, namespaceOf(r), "console")
}

// ActionCallIn is ActionCall in namespace, for a door that names it in its path (A2A); the
// call's ID is "<via>/<namespace>/<user>/<random>".
func (o Options) ActionCallIn(w http.ResponseWriter, r *http.Request, namespace, via string) (*sessiontools.Call, int, error) {
	id, err := o.identityOf(r.Context(), r.Header, namespace, "")
	if err != nil {
		if errors.Is(err, caller.ErrUnauthenticated) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agent-sessions"`)
			return nil, http.StatusUnauthorized, err
		}
		return nil, http.StatusInternalServerError, err
	}
	if err := o.mayList(r.Context(), id.user, id.namespace); err != nil {
		return nil, APICode(err), err
	}
	if err := o.Limits.Rates.Exhausted(id.user.GetName()); err != nil {
		return nil, http.StatusTooManyRequests, err
	}
	call, err := newCall(r.Context(), o, id, callID(via, id))
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	return call, 0, nil
}

// APICode is the HTTP status the API server answered err with, 429 for a caller over its
// rate, else 500.
func APICode(err error) int {
	if errors.Is(err, userlimits.ErrRateLimited) {
		return http.StatusTooManyRequests
	}
	var s apierrors.APIStatus
	if errors.As(err, &s) && s.Status().Code >= 400 {
		return int(s.Status().Code)
	}
	return http.StatusInternalServerError
}
