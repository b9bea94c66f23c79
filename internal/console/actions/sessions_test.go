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

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/console/actions"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver/mcpservertest"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// postJSON posts body to a console action as alice and decodes the answer into out.
func postJSON(t *testing.T, h http.Handler, path, body string, out any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path+"?namespace="+mcpservertest.Namespace, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if err := json.Unmarshal(rec.Body.Bytes(), out); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
	}
}

func TestConsoleSessionsCarryCountersAndUsage(t *testing.T) {
	o, fc := mcpservertest.Options()
	ctx := context.Background()
	ops := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: mcpservertest.Namespace, Name: sessionkey.ObjectName("agent:main:discord:group:ops")},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:discord:group:ops", AgentID: "main", Label: "ops room"},
		Status: sessionsv1alpha1.AgentSessionStatus{SessionID: "s-ops", MessageCount: 7, LastMessagePreview: "deploy done",
			InputTokens: 120, OutputTokens: 30, Usage: &sessionsv1alpha1.Usage{InputTokens: 120, OutputTokens: 30, Cost: "0.001000000", Currency: "USD"}}}
	if err := fc.Create(ctx, ops); err != nil {
		t.Fatal(err)
	}
	h := actions.Handler(o)
	type row struct {
		Key                string                  `json:"key"`
		Kind               string                  `json:"kind"`
		Label              string                  `json:"label"`
		MessageCount       int64                   `json:"messageCount"`
		LastMessagePreview string                  `json:"lastMessagePreview"`
		Usage              *sessionsv1alpha1.Usage `json:"usage"`
	}
	var out struct {
		Sessions []row `json:"sessions"`
	}
	postJSON(t, h, "/console/sessions", `{"limit":10}`, &out)
	got := map[string]row{}
	for _, r := range out.Sessions {
		got[r.Key] = r
	}
	want := map[string]row{
		"agent:main:main": {Key: "agent:main:main", Kind: "main"},
		"agent:main:discord:group:ops": {Key: "agent:main:discord:group:ops", Kind: "group", Label: "ops room", MessageCount: 7,
			LastMessagePreview: "deploy done", Usage: ops.Status.Usage},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("console sessions (-want +got):\n%s", d)
	}
	if code, _ := consoleAction(t, h, "/console/sessions", "mallory", "", "application/json", `{}`); code != http.StatusForbidden {
		t.Errorf("sessions for a user without list: %d, want 403", code)
	}
}

func TestConsoleWorkListsTheRunTree(t *testing.T) {
	o, fc := mcpservertest.Options()
	ctx := context.Background()
	ns := mcpservertest.Namespace
	run := func(name, requester, child string) client.Object {
		return &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:   sessionsv1alpha1.SubagentRunSpec{AgentID: "main", Task: "t", RequesterSessionKey: requester},
			Status: sessionsv1alpha1.SubagentRunStatus{ChildSessionKey: child}}
	}
	for _, obj := range []client.Object{
		run("research", "agent:main:main", "agent:main:subagent:c1"),
		run("deep-dive", "agent:main:subagent:c1", "agent:main:subagent:c2"),
		run("fact-check", "agent:main:subagent:c2", "agent:main:subagent:c3"),
		// A child that asks its ancestor to run again: listed, not followed into a loop.
		run("loop", "agent:main:subagent:c3", "agent:main:main"),
		run("elsewhere", "agent:other:main", "agent:other:subagent:x"),
	} {
		if err := fc.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	var out struct {
		Runs        []sessionsv1alpha1.SubagentRun `json:"runs"`
		Descendants []sessionsv1alpha1.SubagentRun `json:"descendants"`
	}
	postJSON(t, actions.Handler(o), "/console/work", `{"sessionKey":"agent:main:main"}`, &out)
	names := func(runs []sessionsv1alpha1.SubagentRun) []string {
		var n []string
		for _, r := range runs {
			n = append(n, r.Name)
		}
		return n
	}
	if d := cmp.Diff([]string{"research"}, names(out.Runs)); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"deep-dive", "fact-check", "loop"}, names(out.Descendants)); d != "" {
		t.Errorf("the run tree under them, level by level (-want +got):\n%s", d)
	}
}
