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

package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestApprovalsTable(t *testing.T) {
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	tool := sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: "tap-tool", Namespace: "team",
		CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Minute))},
		Spec: sessionsv1alpha1.ToolApprovalSpec{Kind: sessionsv1alpha1.ApprovalKindTool, Tool: "mcp__db__drop", Arguments: `{"table":"users"}`,
			SessionKey: "agent:ops:main", Owner: sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: "s1"},
			ExpiresAt: metav1.NewTime(now.Add(8 * time.Minute))}}
	// An approval stored before kinds existed reads as a tool call's.
	old := *tool.DeepCopy()
	old.Name, old.Spec.Kind = "tap-old", ""
	budget := sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: "tap-budget", Namespace: "team",
		CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))},
		Spec: sessionsv1alpha1.ToolApprovalSpec{Kind: sessionsv1alpha1.ApprovalKindBudget, SessionKey: "agent:ops:subagent:x",
			Owner:     sessionsv1alpha1.ApprovalOwner{Kind: "SubagentRun", Name: "r2"},
			ExpiresAt: metav1.NewTime(now.Add(9 * time.Minute)),
			Budget: &sessionsv1alpha1.BudgetApproval{BudgetOf: sessionsv1alpha1.ApprovalOwner{Kind: "SubagentRun", Name: "r1"},
				Resource: sessionsv1alpha1.BudgetCost, Spent: "1.00", Limit: "1.00", More: "0.50", Currency: "USD",
				Message: "run tree r1 spent 1.00 of 1.00 USD; approve to allow 0.50 more"}}}
	cases := map[string]struct {
		all  bool
		want string
	}{
		"one namespace": {want: "" +
			"NAME        KIND    TOOL           SESSION               OWNER           AGE  EXPIRES IN  ARGUMENTS\n" +
			"tap-tool    Tool    mcp__db__drop  agent:ops:main        SessionSend/s1  2m   8m          {\"table\":\"users\"}\n" +
			"tap-old     Tool    mcp__db__drop  agent:ops:main        SessionSend/s1  2m   8m          {\"table\":\"users\"}\n" +
			"tap-budget  Budget  -              agent:ops:subagent:x  SubagentRun/r2  60s  9m          run tree r1 spent 1.00 of 1.00 USD; approve to allow 0.50 more\n"},
		"every namespace": {all: true, want: "" +
			"NAMESPACE  NAME        KIND    TOOL  SESSION               OWNER           AGE  EXPIRES IN  ARGUMENTS\n" +
			"team       tap-budget  Budget  -     agent:ops:subagent:x  SubagentRun/r2  60s  9m          run tree r1 spent 1.00 of 1.00 USD; approve to allow 0.50 more\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			list := []sessionsv1alpha1.ToolApproval{tool, old, budget}
			if tc.all {
				list = list[2:]
			}
			var out bytes.Buffer
			if err := printApprovals(&out, list, tc.all, now); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, out.String()); d != "" {
				t.Errorf("approvals (-want +got):\n%s", d)
			}
		})
	}
}
