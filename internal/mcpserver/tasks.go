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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/tracing"
)

// The tasks extension of MCP 2026-07-28 (SEP-2663): a sessions_send that may wait longer
// than a client holds a request open returns a task at once, which the client polls with
// tasks/get and cancels with tasks/cancel (or tasks/update). The task is the SessionSend
// behind it (its id the send's runId), so it lives as long as the send, across restarts and
// replicas, and it is found only among the sends its caller made (a label of the
// authenticated user's hash). The Go SDK does not serve the extension: its methods are
// answered here, before the SDK, for requests of the stateless revision.
const (
	// TasksExtension is the extension's id in capabilities.extensions.
	TasksExtension = "io.modelcontextprotocol/tasks"
	// TaskAfterSeconds: a sessions_send whose timeoutSeconds is above it becomes a task,
	// when the client negotiated the extension.
	TaskAfterSeconds = 30
	// LabelTaskCaller marks a task's send with its caller: 40 hex characters of the SHA-256
	// of the user the API server authenticated.
	LabelTaskCaller = "mcp.sessions.agents.dev/caller"
	// taskPollInterval is the poll interval tasks suggest.
	taskPollInterval = time.Second
	// codeMissingCapability answers a tasks/* method of a client that did not negotiate the
	// extension (SEP-2575's MissingRequiredClientCapability).
	codeMissingCapability = -32021
	// clientCapabilitiesMeta is the _meta key a stateless request carries its capabilities in.
	clientCapabilitiesMeta = "io.modelcontextprotocol/clientCapabilities"
)

// taskCallerLabel is the label value of a user.
func taskCallerLabel(user string) string { return caller.TaskOwner(user) }

// rpcRequest is one JSON-RPC request of the stateless revision, as far as tasks read it.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		TaskID    string          `json:"taskId"`
		Status    string          `json:"status"`
		Meta      map[string]any  `json:"_meta"`
	} `json:"params"`
}

// negotiated says the request's _meta declares the tasks extension among its capabilities.
func (q *rpcRequest) negotiated() bool {
	caps, _ := q.Params.Meta[clientCapabilitiesMeta].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[TasksExtension]
	return ok
}

// taskRequest reads a stateless request that the tasks extension answers (its methods, or a
// sessions_send that becomes a task); nil for any other, whose body is left for the SDK.
func taskRequest(r *http.Request) *rpcRequest {
	if r.Method != http.MethodPost || r.Body == nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, mcp.DefaultMaxRequestBodyBytes+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	var q rpcRequest
	if err != nil || json.Unmarshal(b, &q) != nil {
		return nil
	}
	switch q.Method {
	case "tasks/get", "tasks/cancel", "tasks/update", "tasks/list":
		return &q
	case "tools/call":
		if q.Params.Name != "sessions_send" || !q.negotiated() {
			return nil
		}
		var a struct {
			TimeoutSeconds sessiontools.Number `json:"timeoutSeconds"`
		}
		if json.Unmarshal(q.Params.Arguments, &a) != nil || a.TimeoutSeconds.Or(sessiontools.DefaultSendTimeoutSeconds) <= TaskAfterSeconds {
			return nil
		}
		return &q
	}
	return nil
}

// serveTask answers a request taskRequest read, as the caller.
func (o Options) serveTask(w http.ResponseWriter, r *http.Request, q *rpcRequest) {
	if q.Method != "tools/call" && !q.negotiated() {
		writeRPCError(w, q.ID, codeMissingCapability, "the client did not declare the "+TasksExtension+" extension in _meta."+clientCapabilitiesMeta)
		return
	}
	ctx := r.Context()
	id, err := o.identityOf(ctx, r.Header, namespaceOf(r), r.URL.Query().Get("session"))
	if err != nil {
		writeRPCError(w, q.ID, -32603, err.Error())
		return
	}
	var result any
	switch q.Method {
	case "tools/call":
		result, err = o.startTask(ctx, id, q)
	case "tasks/get":
		result, err = o.getTask(ctx, id, q.Params.TaskID)
	case "tasks/cancel":
		err = o.cancelTask(ctx, id, q.Params.TaskID)
		result = map[string]any{"resultType": "complete"}
	case "tasks/update":
		if q.Params.Status != "cancelled" {
			err = invalidParams("tasks/update: a task here takes no input; status \"cancelled\" cancels it")
			break
		}
		err = o.cancelTask(ctx, id, q.Params.TaskID)
		result = map[string]any{"resultType": "complete"}
	default:
		err = &rpcError{code: -32601, msg: q.Method + " is not offered: poll the task you were given"}
	}
	var re *rpcError
	switch {
	case errors.As(err, &re):
		writeRPCError(w, q.ID, re.code, re.msg)
	case err != nil:
		writeRPCError(w, q.ID, -32603, err.Error())
	default:
		writeRPCResult(w, q.ID, result)
	}
}

// startTask creates the send of a sessions_send call without waiting for it and answers the
// task; a refusal or a bad call is the tool's own result, as without the extension.
func (o Options) startTask(ctx context.Context, id *identity, q *rpcRequest) (any, error) {
	call, err := newCall(ctx, o, id, callID("mcp", id))
	if err != nil {
		return toolResult(textResult(sessiontools.ErrorResult(err), true)), nil
	}
	call.NoWait = true
	call.Stamp = stampMeta(q.Params.Meta, map[string]string{LabelTaskCaller: taskCallerLabel(id.user.GetName())})
	out, err := runTool(ctx, call, q.Params.Name, q.Params.Arguments)
	if err != nil {
		return toolResult(textResult(sessiontools.ErrorResult(err), true)), nil
	}
	st, ok := out.(sessiontools.StatusResult)
	if !ok || st.Status != sessiontools.StatusAccepted || st.RunID == "" {
		b, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		return toolResult(textResult(string(b), sessiontools.Refused(out))), nil
	}
	send, err := o.findTask(ctx, id, st.RunID)
	if err != nil {
		return nil, err
	}
	t := taskOf(send)
	t["resultType"] = "task"
	return t, nil
}

// runTool runs the named session tool.
func runTool(ctx context.Context, call *sessiontools.Call, name string, args json.RawMessage) (any, error) {
	for _, t := range Tools() {
		if t.Name == name {
			return t.Run(ctx, call, args)
		}
	}
	return nil, errors.New("unknown tool " + name)
}

// getTask is the task as it is now; a finished one carries the tool's result.
func (o Options) getTask(ctx context.Context, id *identity, taskID string) (any, error) {
	send, err := o.findTask(ctx, id, taskID)
	if err != nil {
		return nil, err
	}
	t := taskOf(send)
	env := &sessiontools.Env{Client: id.client, Reader: id.reader, APIReader: id.client, Store: o.Store}
	if send, err = env.WithWholeReply(ctx, send); err != nil {
		return nil, err
	}
	if res, ok := sessiontools.SendOutcome(send); ok && send.Status.Phase != sessionsv1alpha1.SendCancelled {
		b, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		t["result"] = toolResult(textResult(string(b), false))
	}
	return t, nil
}

// cancelTask sets spec.cancel on the task's send, as the caller; a finished task is left
// as it is (the ack is the same).
func (o Options) cancelTask(ctx context.Context, id *identity, taskID string) error {
	send, err := o.findTask(ctx, id, taskID)
	if err != nil {
		return err
	}
	if send.Status.Finished() || send.Spec.Cancel {
		return nil
	}
	if err := o.may(ctx, id.user, caller.CancelSend, id.namespace, send.Name); err != nil {
		return &rpcError{code: -32603, msg: err.Error()}
	}
	return sessiontools.Cancel(ctx, id.client, send)
}

// findTask is the send of a task id among the sends the caller made as tasks; any other id,
// another caller's task among them, is an unknown task.
func (o Options) findTask(ctx context.Context, id *identity, taskID string) (*sessionsv1alpha1.SessionSend, error) {
	uid := sessiontools.OwnerUIDOf(taskID)
	unknown := invalidParams("unknown task " + taskID)
	if uid == "" || taskID != sessiontools.TurnID(uid, "round-1") {
		return nil, unknown
	}
	var list sessionsv1alpha1.SessionSendList
	err := id.client.List(ctx, &list, client.InNamespace(id.namespace), client.MatchingLabels{LabelTaskCaller: taskCallerLabel(id.user.GetName())})
	if apierrors.IsForbidden(err) {
		return nil, unknown
	}
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].UID == uid {
			return &list.Items[i], nil
		}
	}
	return nil, unknown
}

// taskOf is the task fields of a send: its status (working, completed or cancelled), when
// it was made and last changed, how long it is kept after it ends (ttlMs: null when the
// manager's default applies), and the poll interval.
func taskOf(s *sessionsv1alpha1.SessionSend) map[string]any {
	status := "working"
	switch _, done := sessiontools.SendOutcome(s); {
	case s.Status.Phase == sessionsv1alpha1.SendCancelled:
		status = "cancelled"
	case done:
		status = "completed"
	}
	updated := s.CreationTimestamp.Time
	for _, at := range []*time.Time{timeOf(s.Status.StartedAt), timeOf(s.Status.CompletedAt)} {
		if at != nil && at.After(updated) {
			updated = *at
		}
	}
	var ttl any
	if t := s.Spec.TTLSecondsAfterFinished; t != nil && *t > 0 {
		ttl = int64(*t) * 1000
	}
	return map[string]any{
		"taskId": sessiontools.TurnID(s.UID, "round-1"), "status": status,
		"createdAt": s.CreationTimestamp.UTC().Format(time.RFC3339), "lastUpdatedAt": updated.UTC().Format(time.RFC3339),
		"ttlMs": ttl, "pollIntervalMs": taskPollInterval.Milliseconds(),
	}
}

func toolResult(r *mcp.CallToolResult) map[string]any {
	return map[string]any{"resultType": "complete", "content": r.Content, "isError": r.IsError}
}

// rpcError is a JSON-RPC error to answer.
type rpcError struct {
	code int
	msg  string
}

func (e *rpcError) Error() string { return e.msg }

func invalidParams(msg string) *rpcError { return &rpcError{code: -32602, msg: msg} }

func writeRPCResult(w http.ResponseWriter, id json.RawMessage, result any) {
	writeRPC(w, map[string]any{"jsonrpc": "2.0", "id": rawID(id), "result": result})
}

func writeRPCError(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	writeRPC(w, map[string]any{"jsonrpc": "2.0", "id": rawID(id), "error": map[string]any{"code": code, "message": msg}})
}

func writeRPC(w http.ResponseWriter, body any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func rawID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// stampMeta stamps what a call creates with labels and with what the request's _meta
// carries: a W3C traceparent makes the object's root span a child of the caller's span
// (tracing.ParentAnnotation), so the sends and turns the call starts join the caller's
// trace; a well-formed chain (policy.ChainMetaKey) joins the caller's chain, whose values
// only narrow this namespace's limits (one that is malformed is dropped: a new chain).
// Every object is marked as made by this door (DoorAnnotation), which the door limits count.
func stampMeta(meta map[string]any, labels map[string]string) func(context.Context, client.Object) error {
	annotations := map[string]string{sessionsv1alpha1.DoorAnnotation: "mcp"}
	tp, _ := meta["traceparent"].(string)
	if root := tracing.NewChild(tp); root != "" {
		annotations[tracing.Annotation], annotations[tracing.ParentAnnotation] = root, tp
	}
	if c, err := policy.CarriedFromValue(meta[policy.ChainMetaKey]); err == nil && c != nil {
		annotations[sessionsv1alpha1.CarriedChainAnnotation] = c.Encode()
	}
	return func(_ context.Context, obj client.Object) error {
		if len(labels) > 0 {
			obj.SetLabels(mergeMap(obj.GetLabels(), labels))
		}
		obj.SetAnnotations(mergeMap(obj.GetAnnotations(), annotations))
		return nil
	}
}

func mergeMap(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}
