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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// The approval tools are for people at /mcp and the console, never for agents: they are
// not session tools (sessiontools.All), so no turn is offered them. Both run as the
// caller: the access layer asks its right, the API server's RBAC judges the list and the
// patch, and the webhook judges the decision and records who made it.

// approvalRow is a pending approval as approvals_list returns it.
type approvalRow struct {
	Name string `json:"name"`
	// Kind is Tool (a tool call waits) or Budget (a send or run tree at its budget).
	Kind string `json:"kind"`
	Tool string `json:"tool,omitempty"`
	// Budget is what a Budget approval asks: whose budget, how much is spent, how much more.
	Budget     *sessionsv1alpha1.BudgetApproval `json:"budget,omitempty"`
	Arguments  string                           `json:"arguments,omitempty"`
	SessionKey string                           `json:"sessionKey"`
	AgentID    string                           `json:"agentId"`
	Owner      string                           `json:"owner"`
	CreatedAt  time.Time                        `json:"createdAt"`
	ExpiresAt  time.Time                        `json:"expiresAt"`
}

func approvalsListTool() sessiontools.Tool {
	return sessiontools.Tool{Name: "approvals_list",
		Description: "List what waits for a person's decision in this namespace, oldest first: agents' tool calls (kind Tool) and sends or run trees at their budget (kind Budget, with what they ask).",
		Schema:      sessiontools.Schema(map[string]any{}),
		Run: func(ctx context.Context, c *sessiontools.Call, _ json.RawMessage) (any, error) {
			if err := mayAtDoor(ctx, c, caller.ListApprovals, ""); err != nil {
				return nil, err
			}
			pending, err := sessiontools.PendingApprovals(ctx, c.Client, c.Namespace)
			if err != nil {
				return nil, err
			}
			rows := make([]approvalRow, 0, len(pending))
			for _, ta := range pending {
				rows = append(rows, approvalRow{Name: ta.Name, Kind: cmp.Or(string(ta.Spec.Kind), string(sessionsv1alpha1.ApprovalKindTool)),
					Tool: ta.Spec.Tool, Budget: ta.Spec.Budget, Arguments: ta.Spec.Arguments,
					SessionKey: ta.Spec.SessionKey, AgentID: ta.Spec.AgentID, Owner: ta.Spec.Owner.Kind + "/" + ta.Spec.Owner.Name,
					CreatedAt: ta.CreationTimestamp.Time, ExpiresAt: ta.Spec.ExpiresAt.Time})
			}
			return map[string]any{"status": sessiontools.StatusOK, "approvals": rows}, nil
		}}
}

type decideArgs struct {
	Name     string `json:"name"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

func approvalsDecideTool() sessiontools.Tool {
	str := map[string]any{"type": "string"}
	return sessiontools.Tool{Name: "approvals_decide",
		Description: "Approve or deny what waits for a person (name from approvals_list): a tool call (a denial's reason is told to the agent) or a budget (approved, the work goes on with more; denied, it fails). A denial needs a reason.",
		Schema: sessiontools.Schema(map[string]any{"name": str,
			"decision": map[string]any{"type": "string", "enum": []string{string(sessionsv1alpha1.DecisionApproved), string(sessionsv1alpha1.DecisionDenied)}},
			"reason":   str}, "name", "decision"),
		Run: func(ctx context.Context, c *sessiontools.Call, args json.RawMessage) (any, error) {
			var a decideArgs
			if err := sessiontools.DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			if a.Name == "" {
				return nil, errors.New("name is required")
			}
			if err := mayAtDoor(ctx, c, caller.DecideApproval, a.Name); err != nil {
				return nil, err
			}
			if err := sessiontools.Decide(ctx, c.Client, c.Namespace, a.Name, sessionsv1alpha1.ApprovalDecision(a.Decision), a.Reason); err != nil {
				return nil, err
			}
			return map[string]any{"status": sessiontools.StatusOK, "name": a.Name, "decision": a.Decision}, nil
		}}
}

// mayAtDoor asks the access layer; a call without one (not made at a door) may nothing.
func mayAtDoor(ctx context.Context, c *sessiontools.Call, r caller.Right, name string) error {
	if c.Access == nil {
		return errors.New("the approval tools are for people at /mcp and the console")
	}
	return c.Access(ctx, r, name)
}
