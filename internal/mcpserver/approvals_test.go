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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// TestApprovalsListShowsBudgets: approvals_list gives each row its kind; a budget's row has
// what it asks and no tool, a tool call's its tool and arguments.
func TestApprovalsListShowsBudgets(t *testing.T) {
	srv, fc := endpoint(t)
	expires := metav1.NewTime(time.Now().Add(10 * time.Minute).Truncate(time.Second))
	ask := &sessionsv1alpha1.BudgetApproval{BudgetOf: sessionsv1alpha1.ApprovalOwner{Kind: "SubagentRun", Name: "r1"},
		Resource: sessionsv1alpha1.BudgetCost, Spent: "1.00", Limit: "1.00", More: "0.50", Currency: "USD",
		Message: "run tree r1 spent 1.00 of 1.00 USD; approve to allow 0.50 more"}
	for _, ta := range []*sessionsv1alpha1.ToolApproval{
		{ObjectMeta: metav1.ObjectMeta{Name: "tap-budget", Namespace: ns}, Spec: sessionsv1alpha1.ToolApprovalSpec{Kind: sessionsv1alpha1.ApprovalKindBudget,
			SessionKey: "agent:main:main", AgentID: "main", Budget: ask, Owner: sessionsv1alpha1.ApprovalOwner{Kind: "SubagentRun", Name: "r2"}, ExpiresAt: expires}},
		{ObjectMeta: metav1.ObjectMeta{Name: "tap-tool", Namespace: ns}, Spec: sessionsv1alpha1.ToolApprovalSpec{SessionKey: "agent:main:main", AgentID: "main",
			Tool: "mcp__db__drop", Arguments: `{"table":"users"}`, Owner: sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: "s1"}, ExpiresAt: expires}},
	} {
		if err := fc.Create(t.Context(), ta); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := connect(t, srv.URL+"/mcp?namespace="+ns)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "approvals_list", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Kind, Tool, Arguments string
		Budget                      *sessionsv1alpha1.BudgetApproval
	}
	var out struct{ Approvals []row }
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	want := map[string]row{
		"tap-budget": {Name: "tap-budget", Kind: "Budget", Budget: ask},
		// Stored without a kind (as before kinds), it reads as a tool call's.
		"tap-tool": {Name: "tap-tool", Kind: "Tool", Tool: "mcp__db__drop", Arguments: `{"table":"users"}`},
	}
	got := map[string]row{}
	for _, a := range out.Approvals {
		got[a.Name] = a
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("approvals_list (-want +got):\n%s", d)
	}
}
