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

package actions

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
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

// Handler serves the console's writes and first reads, made as the signed-in caller exactly as
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
// is never granted) and a local or allowed Origin. Like /mcp, every action needs the right
// to list the namespace's sessions, and then the rights of what it does.
func Handler(o mcpserver.Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			actionError(w, http.StatusMethodNotAllowed, errors.New("POST only"))
			return
		}
		if !o.HostAllowed(r) {
			actionError(w, http.StatusForbidden, errors.New("host or origin not allowed"))
			return
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			actionError(w, http.StatusUnsupportedMediaType, errors.New("Content-Type must be application/json"))
			return
		}
		call, code, err := o.ActionCall(w, r)
		if err != nil {
			actionError(w, code, err)
			return
		}
		act, ok := consoleActions[r.URL.Path]
		if !ok {
			act, ok = toolAction(r.URL.Path)
		}
		if !ok {
			actionError(w, http.StatusNotFound, errors.New("no such action"))
			return
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxActionBody))
		dec.DisallowUnknownFields()
		code, out, err := act(r.Context(), call, dec)
		if err != nil {
			actionError(w, code, err)
			return
		}
		writeJSON(w, code, out)
	})
}

// consoleAction does one console action as call's caller: the status and body of the
// answer, or of the error.
type consoleAction func(ctx context.Context, call *sessiontools.Call, dec *json.Decoder) (int, any, error)

// consoleActions are the console's actions besides the tools, by path.
var consoleActions = map[string]consoleAction{
	"/console/send":     consoleSend,
	"/console/cancel":   consoleCancel,
	"/console/work":     consoleWork,
	"/console/sessions": consoleSessions,
}

// Paths are every console action's path, each a door of its own (the door matrix
// test needs a row for each).
func Paths() []string {
	var paths []string
	for p := range consoleActions {
		paths = append(paths, p)
	}
	for _, t := range mcpserver.Tools() {
		if !t.SessionOnly {
			paths = append(paths, consoleToolsPrefix+t.Name)
		}
	}
	slices.Sort(paths)
	return paths
}

const consoleToolsPrefix = "/console/tools/"

func consoleSend(ctx context.Context, call *sessiontools.Call, dec *json.Decoder) (int, any, error) {
	var a sendAction
	if err := dec.Decode(&a); err != nil || a.SessionKey == "" || a.Message == "" {
		return http.StatusBadRequest, nil, errors.New(`want {"sessionKey": "...", "message": "..."}`)
	}
	s, denied, err := call.StartSend(ctx, a.SessionKey, a.Message, sessiontools.DefaultSendTimeoutSeconds)
	switch {
	case err != nil:
		return mcpserver.APICode(err), nil, err
	case denied != nil:
		return refusalCode(denied), nil, errors.New(denied.Error)
	}
	return http.StatusCreated, map[string]string{"name": s.Name, "runId": sessiontools.TurnID(s.UID, "round-1")}, nil
}

func consoleCancel(ctx context.Context, call *sessiontools.Call, dec *json.Decoder) (int, any, error) {
	var a cancelAction
	if err := dec.Decode(&a); err != nil {
		return http.StatusBadRequest, nil, errors.New(`want {"kind": "send"|"run", "name": "..."}`)
	}
	obj, err := sessiontools.Cancellable(a.Kind, a.Name)
	if err != nil {
		return http.StatusBadRequest, nil, err
	}
	obj.SetNamespace(call.Namespace)
	if err := call.Cancel(ctx, obj); err != nil {
		return mcpserver.APICode(err), nil, err
	}
	return http.StatusOK, map[string]string{"name": a.Name, "status": "cancel requested"}, nil
}

func consoleWork(ctx context.Context, call *sessiontools.Call, dec *json.Decoder) (int, any, error) {
	var a struct {
		SessionKey string `json:"sessionKey"`
	}
	if err := dec.Decode(&a); err != nil || a.SessionKey == "" {
		return http.StatusBadRequest, nil, errors.New(`want {"sessionKey": "..."}`)
	}
	work, err := workOf(ctx, call, a.SessionKey)
	if err != nil {
		return mcpserver.APICode(err), nil, err
	}
	return http.StatusOK, work, nil
}

func consoleSessions(ctx context.Context, call *sessiontools.Call, dec *json.Decoder) (int, any, error) {
	var a struct {
		Limit sessiontools.Number `json:"limit"`
	}
	if err := dec.Decode(&a); err != nil {
		return http.StatusBadRequest, nil, errors.New(`want {"limit": N}`)
	}
	rows, err := sessionsOf(ctx, call, a.Limit)
	if err != nil {
		return mcpserver.APICode(err), nil, err
	}
	return http.StatusOK, map[string]any{"sessions": rows, "count": len(rows)}, nil
}

// toolAction runs the tool a /console/tools/NAME path names.
func toolAction(path string) (consoleAction, bool) {
	name, ok := strings.CutPrefix(path, consoleToolsPrefix)
	if !ok {
		return nil, false
	}
	t, ok := toolNamed(name)
	if !ok {
		return nil, false
	}
	return func(ctx context.Context, call *sessiontools.Call, dec *json.Decoder) (int, any, error) {
		var args json.RawMessage
		if err := dec.Decode(&args); err != nil {
			return http.StatusBadRequest, nil, errors.New("want the tool's arguments as a JSON object")
		}
		out, err := t.Run(ctx, call, args)
		if err != nil {
			return mcpserver.APICode(err), nil, err
		}
		return http.StatusOK, out, nil
	}, true
}

func toolNamed(name string) (sessiontools.Tool, bool) {
	for _, t := range mcpserver.Tools() {
		if t.Name == name && !t.SessionOnly { // the console speaks as a person
			return t, true
		}
	}
	return sessiontools.Tool{}, false
}

// refusalCode is the HTTP status of a refused send: 403 for a policy or RBAC refusal, 422
// for arguments the API server refused.
func refusalCode(r *sessiontools.StatusResult) int {
	if r.Status == sessiontools.StatusForbidden {
		return http.StatusForbidden
	}
	return http.StatusUnprocessableEntity
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
