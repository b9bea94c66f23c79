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
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

type subagentsArgs struct {
	SessionKey string `json:"sessionKey"`
	Cancel     string `json:"cancel"`
}

// runRow is one run a session started.
type runRow struct {
	RunID           string `json:"runId"`
	Name            string `json:"name"`
	Label           string `json:"label,omitempty"`
	AgentID         string `json:"agentId,omitempty"`
	ChildSessionKey string `json:"childSessionKey,omitempty"`
	Phase           string `json:"phase,omitempty"`
	Result          string `json:"result,omitempty"`
	Cancelled       bool   `json:"cancelRequested,omitempty"`
}

// subagentsTool lists the runs a session started, or cancels one (spec.cancel).
func subagentsTool() sessiontools.Tool {
	str := map[string]any{"type": "string"}
	return sessiontools.Tool{Name: "subagents",
		Description: "List the sub-agent runs a session started (sessionKey, default the session this connection acts as), or cancel one by runId or name.",
		Schema:      sessiontools.Schema(map[string]any{"sessionKey": str, "cancel": str}),
		Run: func(ctx context.Context, c *sessiontools.Call, args json.RawMessage) (any, error) {
			var a subagentsArgs
			if err := sessiontools.DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			key := a.SessionKey
			if key == "" && c.Session != nil {
				key = c.Session.Spec.Key
			}
			if key == "" {
				return nil, errors.New("sessionKey is required")
			}
			return subagents(ctx, c, key, a.Cancel)
		}}
}

// subagentPage bounds one read of a session's runs: the API server selects them by
// requester (a selectable field) and sends them a page at a time.
const subagentPage = 500

func subagents(ctx context.Context, c *sessiontools.Call, key, cancel string) (any, error) {
	rows := []runRow{}
	for cont := ""; ; {
		var runs sessionsv1alpha1.SubagentRunList
		if err := c.Reader.List(ctx, &runs, client.InNamespace(c.Namespace), client.MatchingFields{cacheindex.RunRequester: key},
			client.Limit(subagentPage), client.Continue(cont)); err != nil {
			return nil, err
		}
		for i := range runs.Items {
			r := &runs.Items[i]
			if r.Spec.RequesterSessionKey != key {
				continue
			}
			if cancel != "" && (string(r.UID) == cancel || r.Name == cancel) {
				if err := c.Cancel(ctx, r); err != nil {
					return nil, err
				}
				return map[string]any{"status": sessiontools.StatusOK, "runId": string(r.UID), "cancelled": true}, nil
			}
			rows = append(rows, runRow{RunID: string(r.UID), Name: r.Name, Label: r.Spec.Label, AgentID: r.Spec.AgentID,
				ChildSessionKey: r.Status.ChildSessionKey, Phase: string(r.Status.Phase), Result: r.Status.Result, Cancelled: r.Spec.Cancel})
		}
		if cont = runs.Continue; cont == "" {
			break
		}
	}
	if cancel != "" {
		return nil, errors.New("no run " + cancel + " of session " + key)
	}
	slices.SortFunc(rows, func(a, b runRow) int { return strings.Compare(a.Name, b.Name) })
	return map[string]any{"runs": rows, "count": len(rows)}, nil
}
