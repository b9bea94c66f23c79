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
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// maxActionBody bounds a console action's body: a send's message is at most 256 KiB.
const maxActionBody = 512 << 10

type sendAction struct {
	SessionKey string `json:"sessionKey"`
	Message    string `json:"message"`
}

type cancelAction struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// ConsoleHandler serves the console's writes and first reads, made as the signed-in caller exactly as
// the MCP tools are:
//
//	POST /console/send?namespace=NS   {"sessionKey","message"}  a person's send; 201 {"name","runId"}
//	POST /console/cancel?namespace=NS {"kind":"send"|"run","name"}  sets spec.cancel; 200
//	POST /console/tools/NAME?namespace=NS {arguments}  a session tool as a person; its result
//	POST /console/work?namespace=NS   {"sessionKey"}  the sends into it, the runs it started and their run tree
//	POST /console/sessions?namespace=NS {"limit"}  sessions_list's rows with counters and usage
//
// The outcome arrives on /events. Another site cannot make these requests for a signed-in
// person: they need the bearer header and a JSON body (both force a CORS preflight, which
// is never granted) and a local or allowed Origin.
func ConsoleHandler(o Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			actionError(w, http.StatusMethodNotAllowed, errors.New("POST only"))
			return
		}
		if !hostAllowed(r, o.AllowedHosts) {
			actionError(w, http.StatusForbidden, errors.New("host or origin not allowed"))
			return
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			actionError(w, http.StatusUnsupportedMediaType, errors.New("Content-Type must be application/json"))
			return
		}
		id, err := o.identityOf(r.Context(), r.Header, namespaceOf(r), "")
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, caller.ErrUnauthenticated) {
				code = http.StatusUnauthorized
				w.Header().Set("WWW-Authenticate", `Bearer realm="agent-sessions"`)
			}
			actionError(w, code, err)
			return
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxActionBody))
		dec.DisallowUnknownFields()
		switch r.URL.Path {
		case "/console/send":
			var a sendAction
			if err := dec.Decode(&a); err != nil || a.SessionKey == "" || a.Message == "" {
				actionError(w, http.StatusBadRequest, errors.New(`want {"sessionKey": "...", "message": "..."}`))
				return
			}
			call, err := newCall(r.Context(), o, id, callID("console", id))
			if err != nil {
				actionError(w, http.StatusInternalServerError, err)
				return
			}
			s, denied, err := call.StartSend(r.Context(), a.SessionKey, a.Message, sessiontools.DefaultSendTimeoutSeconds)
			switch {
			case err != nil:
				actionError(w, apiCode(err), err)
			case denied != nil:
				actionError(w, http.StatusForbidden, errors.New(denied.Error))
			default:
				writeJSON(w, http.StatusCreated, map[string]string{"name": s.Name, "runId": sessiontools.TurnID(s.UID, "round-1")})
			}
		case "/console/cancel":
			var a cancelAction
			if err := dec.Decode(&a); err != nil {
				actionError(w, http.StatusBadRequest, errors.New(`want {"kind": "send"|"run", "name": "..."}`))
				return
			}
			obj, err := sessiontools.Cancellable(a.Kind, a.Name)
			if err != nil {
				actionError(w, http.StatusBadRequest, err)
				return
			}
			obj.SetNamespace(id.namespace)
			if err := sessiontools.Cancel(r.Context(), id.client, obj); err != nil {
				actionError(w, apiCode(err), err)
				return
			}
			writeJSON(w, http.StatusOK, map[string]string{"name": a.Name, "status": "cancel requested"})
		case "/console/work":
			var a struct {
				SessionKey string `json:"sessionKey"`
			}
			if err := dec.Decode(&a); err != nil || a.SessionKey == "" {
				actionError(w, http.StatusBadRequest, errors.New(`want {"sessionKey": "..."}`))
				return
			}
			work, err := workOf(r.Context(), id, a.SessionKey)
			if err != nil {
				actionError(w, apiCode(err), err)
				return
			}
			writeJSON(w, http.StatusOK, work)
		case "/console/sessions":
			var a struct {
				Limit sessiontools.Number `json:"limit"`
			}
			if err := dec.Decode(&a); err != nil {
				actionError(w, http.StatusBadRequest, errors.New(`want {"limit": N}`))
				return
			}
			rows, err := sessionsOf(r.Context(), id, a.Limit)
			if err != nil {
				actionError(w, apiCode(err), err)
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"sessions": rows, "count": len(rows)})
		default:
			t, ok := toolNamed(strings.TrimPrefix(r.URL.Path, "/console/tools/"))
			if !ok || !strings.HasPrefix(r.URL.Path, "/console/tools/") {
				actionError(w, http.StatusNotFound, errors.New("no such action"))
				return
			}
			var args json.RawMessage
			if err := dec.Decode(&args); err != nil {
				actionError(w, http.StatusBadRequest, errors.New("want the tool's arguments as a JSON object"))
				return
			}
			call, err := newCall(r.Context(), o, id, callID("console", id))
			if err != nil {
				actionError(w, http.StatusInternalServerError, err)
				return
			}
			out, err := t.Run(r.Context(), call, args)
			if err != nil {
				actionError(w, apiCode(err), err)
				return
			}
			writeJSON(w, http.StatusOK, out)
		}
	})
}

func toolNamed(name string) (sessiontools.Tool, bool) {
	for _, t := range tools() {
		if t.Name == name {
			return t, true
		}
	}
	return sessiontools.Tool{}, false
}

// apiCode is the HTTP status the API server answered with, or 500.
func apiCode(err error) int {
	var s apierrors.APIStatus
	if errors.As(err, &s) && s.Status().Code >= 400 {
		return int(s.Status().Code)
	}
	return http.StatusInternalServerError
}

func actionError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
