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

package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/tracing"
)

// rpc is one JSON-RPC answer of the stateless revision.
type rpc struct {
	Result map[string]any
	Error  *struct {
		Code    int
		Message string
	}
}

func call(t *testing.T, url, token, method string, params map[string]any, negotiate bool) rpc {
	t.Helper()
	if negotiate {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions": map[string]any{mcpserver.TasksExtension: map[string]any{}}}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	got := statelessPost(t, url, token, string(body))
	var r rpc
	if err := json.Unmarshal([]byte(got.body), &r); err != nil {
		t.Fatalf("%s: %d %s", method, got.code, got.body)
	}
	return r
}

// The 2026-07-28 server advertises the tasks extension and gives tools/list a cache hint.
func TestTasksExtensionAdvertisedAndToolsCacheable(t *testing.T) {
	srv, _ := endpoint(t)
	cs, err := connectRevision(t, srv.URL+"/mcp?namespace="+ns, "alice", mcpserver.StatelessRevision)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	caps := cs.InitializeResult().Capabilities
	if caps == nil || caps.Extensions[mcpserver.TasksExtension] == nil {
		t.Errorf("capabilities %+v, want the extension %s", caps, mcpserver.TasksExtension)
	}
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TTLMs <= 0 {
		t.Errorf("tools/list ttlMs %d, want a positive hint", res.TTLMs)
	}
}

// A long sessions_send of a client that negotiated the extension is a task at once: working
// while the send runs, completed with the tool's result once it has one; only its caller
// reads or cancels it.
func TestLongSendIsATask(t *testing.T) {
	srv, fc := endpoint(t)
	url := srv.URL + "/mcp?namespace=" + ns
	created := call(t, url, "alice", "tools/call", map[string]any{"name": "sessions_send",
		"arguments": map[string]any{"sessionKey": "main", "message": "a long one", "timeoutSeconds": 600}}, true)
	if created.Error != nil {
		t.Fatalf("tools/call: %+v", created.Error)
	}
	taskID, _ := created.Result["taskId"].(string)
	if created.Result["resultType"] != "task" || created.Result["status"] != "working" || !strings.HasSuffix(taskID, "/round-1") ||
		created.Result["task"] != nil || created.Result["createdAt"] == nil || created.Result["pollIntervalMs"] == nil {
		t.Fatalf("CreateTaskResult %+v", created.Result)
	}

	get := func(token string) rpc {
		return call(t, url, token, "tasks/get", map[string]any{"taskId": taskID}, true)
	}
	if r := get("alice"); r.Error != nil || r.Result["status"] != "working" || r.Result["result"] != nil {
		t.Errorf("tasks/get while working: %+v %+v", r.Result, r.Error)
	}
	if r := get("bob"); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("bob's tasks/get of alice's task: %+v %+v, want an unknown task (-32602)", r.Result, r.Error)
	}
	if r := call(t, url, "alice", "tasks/get", map[string]any{"taskId": taskID}, false); r.Error == nil || r.Error.Code != -32021 {
		t.Errorf("tasks/get without the extension: %+v, want -32021", r.Error)
	}

	var sends sessionsv1alpha1.SessionSendList
	if err := fc.List(t.Context(), &sends, client.InNamespace(ns)); err != nil || len(sends.Items) != 1 {
		t.Fatalf("sends %d, %v", len(sends.Items), err)
	}
	send := &sends.Items[0]
	if *send.Spec.TimeoutSeconds != 600 {
		t.Errorf("the send's timeoutSeconds %d, want the call's 600", *send.Spec.TimeoutSeconds)
	}
	done := metav1.Now()
	send.Status = sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendOK, Phase: sessionsv1alpha1.SendCompleted, Reply: "pong", OwnerStatus: sessionsv1alpha1.OwnerStatus{CompletedAt: &done}}
	if err := fc.Status().Update(t.Context(), send); err != nil {
		t.Fatal(err)
	}
	r := get("alice")
	res, _ := r.Result["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if r.Result["status"] != "completed" || len(content) != 1 || !strings.Contains(content[0].(map[string]any)["text"].(string), `"reply":"pong"`) {
		t.Errorf("tasks/get once replied: %+v", r.Result)
	}
	if r := call(t, url, "alice", "tasks/cancel", map[string]any{"taskId": taskID}, true); r.Error != nil || r.Result["resultType"] != "complete" || r.Result["taskId"] != nil {
		t.Errorf("tasks/cancel of a finished task: %+v %+v, want the empty ack", r.Result, r.Error)
	}
}

// tasks/cancel (and tasks/update to cancelled) sets spec.cancel on the task's send.
func TestCancelTask(t *testing.T) {
	for _, method := range []string{"tasks/cancel", "tasks/update"} {
		t.Run(method, func(t *testing.T) {
			srv, fc := endpoint(t)
			url := srv.URL + "/mcp?namespace=" + ns
			created := call(t, url, "alice", "tools/call", map[string]any{"name": "sessions_send",
				"arguments": map[string]any{"sessionKey": "main", "message": "slow", "timeoutSeconds": 300}}, true)
			taskID, _ := created.Result["taskId"].(string)
			params := map[string]any{"taskId": taskID}
			if method == "tasks/update" {
				params["status"] = "cancelled"
			}
			if r := call(t, url, "bob", method, params, true); r.Error == nil {
				t.Errorf("bob cancelled alice's task: %+v", r.Result)
			}
			if r := call(t, url, "alice", method, params, true); r.Error != nil || r.Result["resultType"] != "complete" {
				t.Fatalf("%s: %+v %+v", method, r.Result, r.Error)
			}
			var sends sessionsv1alpha1.SessionSendList
			if err := fc.List(t.Context(), &sends, client.InNamespace(ns)); err != nil || len(sends.Items) != 1 || !sends.Items[0].Spec.Cancel {
				t.Errorf("the send's spec.cancel not set (%d sends, %v)", len(sends.Items), err)
			}
		})
	}
}

// A call whose _meta carries a traceparent stamps the send it makes with the caller's trace:
// its root span is a child of the caller's span, in the caller's trace.
func TestTraceparentInMetaJoinsTheCallersTrace(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	srv, fc := endpoint(t)
	cs, err := connectRevision(t, srv.URL+"/mcp?namespace="+ns, "alice", mcpserver.StatelessRevision)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sessions_send", Meta: mcp.Meta{"traceparent": tp},
		Arguments: map[string]any{"sessionKey": "main", "message": "traced", "timeoutSeconds": 0}}); err != nil {
		t.Fatal(err)
	}
	var sends sessionsv1alpha1.SessionSendList
	if err := fc.List(t.Context(), &sends, client.InNamespace(ns)); err != nil || len(sends.Items) != 1 {
		t.Fatalf("sends %d, %v", len(sends.Items), err)
	}
	a := sends.Items[0].Annotations
	root, caller := tracing.Parse(a[tracing.Annotation]), tracing.Parse(tp)
	if a[tracing.ParentAnnotation] != tp || !root.IsValid() || root.TraceID() != caller.TraceID() || root.SpanID() == caller.SpanID() {
		t.Errorf("annotations %v: want the caller's trace with a span of its own, under %s", a, tp)
	}
}
