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

package actions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/console/actions"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver/mcpservertest"
)

func consoleAction(t *testing.T, h http.Handler, path, token, origin, contentType, body string) (int, map[string]string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path+"?namespace="+mcpservertest.Namespace, strings.NewReader(body))
	req.Host = "127.0.0.1:8443"
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]string
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func TestConsoleSendIsAPersonsSend(t *testing.T) {
	o, fc := mcpservertest.Options()
	h := actions.Handler(o)
	code, out := consoleAction(t, h, "/console/send", "alice", "https://127.0.0.1:8443", "application/json",
		`{"sessionKey":"agent:main:main","message":"hello from the console"}`)
	if code != http.StatusCreated || out["name"] == "" || out["runId"] == "" {
		t.Fatalf("send: %d %v, want 201 with a name and runId", code, out)
	}
	var s sessionsv1alpha1.SessionSend
	if err := fc.Get(context.Background(), client.ObjectKey{Namespace: mcpservertest.Namespace, Name: out["name"]}, &s); err != nil {
		t.Fatal(err)
	}
	if s.Spec.Message != "hello from the console" || s.Spec.SessionKey != "agent:main:main" || s.Spec.FromSessionKey != "" {
		t.Errorf("send spec = %+v, want a person's send into agent:main:main", s.Spec)
	}
	if s.Spec.TimeoutSeconds == nil || *s.Spec.TimeoutSeconds != sessionsv1alpha1.DefaultSendTimeoutSeconds {
		t.Errorf("timeoutSeconds = %v, want the default so the reply is recorded", s.Spec.TimeoutSeconds)
	}
}

func TestConsoleCancelSetsSpecCancel(t *testing.T) {
	o, fc := mcpservertest.Options()
	ctx := context.Background()
	run := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: mcpservertest.Namespace, Name: "slow"},
		Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "main", Task: "slow work"}}
	if err := fc.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	code, out := consoleAction(t, actions.Handler(o), "/console/cancel", "alice", "", "application/json", `{"kind":"run","name":"slow"}`)
	if code != http.StatusOK {
		t.Fatalf("cancel: %d %v", code, out)
	}
	if err := fc.Get(ctx, client.ObjectKeyFromObject(run), run); err != nil || !run.Spec.Cancel {
		t.Errorf("spec.cancel = %v (%v), want true", run.Spec.Cancel, err)
	}
	if code, _ := consoleAction(t, actions.Handler(o), "/console/cancel", "alice", "", "application/json", `{"kind":"send","name":"missing"}`); code != http.StatusNotFound {
		t.Errorf("cancel of a missing send: %d, want 404", code)
	}
}

func TestConsoleRunsSessionToolsAsAPerson(t *testing.T) {
	o, _ := mcpservertest.Options()
	h := actions.Handler(o)
	req := httptest.NewRequest(http.MethodPost, "/console/tools/sessions_list?namespace="+mcpservertest.Namespace, strings.NewReader(`{"limit":10}`))
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out struct {
		Count    int `json:"count"`
		Sessions []struct {
			Key string `json:"key"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); rec.Code != http.StatusOK || err != nil || out.Count != 1 || out.Sessions[0].Key != "agent:main:main" {
		t.Fatalf("sessions_list: %d %s, want agent:main:main", rec.Code, rec.Body)
	}
	if code, _ := consoleAction(t, h, "/console/tools/sessions_list", "mallory", "", "application/json", `{}`); code != http.StatusForbidden {
		t.Errorf("sessions_list for a user without list: %d, want 403", code)
	}
}

func TestConsoleActionsRefuse(t *testing.T) {
	o, _ := mcpservertest.Options()
	h := actions.Handler(o)
	send := `{"sessionKey":"agent:main:main","message":"x"}`
	for _, c := range []struct {
		name, path, token, origin, contentType, body string
		want                                         int
	}{
		{"no token", "/console/send", "", "", "application/json", send, http.StatusUnauthorized},
		{"unknown token", "/console/send", "eve", "", "application/json", send, http.StatusUnauthorized},
		{"another site", "/console/send", "alice", "https://evil.example", "application/json", send, http.StatusForbidden},
		{"a form post", "/console/send", "alice", "", "application/x-www-form-urlencoded", send, http.StatusUnsupportedMediaType},
		{"no message", "/console/send", "alice", "", "application/json", `{"sessionKey":"agent:main:main"}`, http.StatusBadRequest},
		{"unknown field", "/console/send", "alice", "", "application/json", `{"sessionKey":"k","message":"m","fromSessionKey":"agent:x:main"}`, http.StatusBadRequest},
		{"not cancellable", "/console/cancel", "alice", "", "application/json", `{"kind":"agentsession","name":"x"}`, http.StatusBadRequest},
		{"no such action", "/console/delete", "alice", "", "application/json", `{}`, http.StatusNotFound},
		{"no such tool", "/console/tools/kubectl_delete", "alice", "", "application/json", `{}`, http.StatusNotFound},
	} {
		if code, out := consoleAction(t, h, c.path, c.token, c.origin, c.contentType, c.body); code != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, code, out, c.want)
		}
	}
}

func TestConsoleWorkListsASessionsSendsAndRuns(t *testing.T) {
	o, fc := mcpservertest.Options()
	ctx := context.Background()
	ns := mcpservertest.Namespace
	for _, obj := range []client.Object{
		&sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "into-main"}, Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:main:main", Message: "a"}},
		&sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "into-other"}, Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:other:main", Message: "b"}},
		&sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "from-main"}, Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "main", Task: "t", RequesterSessionKey: "agent:main:main"}},
		&sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "from-other"}, Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "main", Task: "t", RequesterSessionKey: "agent:other:main"}},
	} {
		if err := fc.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	h := actions.Handler(o)
	req := httptest.NewRequest(http.MethodPost, "/console/work?namespace="+ns, strings.NewReader(`{"sessionKey":"agent:main:main"}`))
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out struct {
		Sends []sessionsv1alpha1.SessionSend `json:"sends"`
		Runs  []sessionsv1alpha1.SubagentRun `json:"runs"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("work: %d %s", rec.Code, rec.Body)
	}
	if len(out.Sends) != 1 || out.Sends[0].Name != "into-main" || len(out.Runs) != 1 || out.Runs[0].Name != "from-main" {
		t.Errorf("work = sends %d, runs %d (%s); want into-main and from-main only", len(out.Sends), len(out.Runs), rec.Body)
	}
	if code, _ := consoleAction(t, h, "/console/work", "mallory", "", "application/json", `{"sessionKey":"agent:main:main"}`); code != http.StatusForbidden {
		t.Errorf("work for a user without list: %d, want 403", code)
	}
}
