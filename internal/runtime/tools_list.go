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

package runtime

import (
	"context"

	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

type listArgs struct {
	Kinds         []string `json:"kinds"`
	Limit         number   `json:"limit"`
	ActiveMinutes number   `json:"activeMinutes"`
	MessageLimit  number   `json:"messageLimit"`
}

func listTool() *tool {
	return &tool{session: true, def: toolDef("sessions_list",
		"List sessions visible to this session, most recently updated first.",
		map[string]any{
			"kinds":         map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"main", "group", "cron", "hook", "node", "other"}}},
			"limit":         map[string]any{"type": "number", "description": "max rows (default 50, at most 200)"},
			"activeMinutes": map[string]any{"type": "number", "description": "only sessions updated within N minutes"},
			"messageLimit":  map[string]any{"type": "number", "description": "include the last N messages of each session (0..20, default 0)"},
		}),
		run: func(ctx context.Context, c *toolCall) (any, error) {
			var a listArgs
			if err := decodeArgs(c.args, &a); err != nil {
				return nil, err
			}
			return c.list(ctx, sessionrows.NewListParams(a.Kinds, a.Limit.or(sessionrows.DefaultListLimit), a.ActiveMinutes.or(0), a.MessageLimit.or(0)))
		}}
}

func (c *toolCall) list(ctx context.Context, p sessionrows.ListParams) (any, error) {
	var all v1.AgentSessionList
	// Read-only use: the cache's objects are not copied (10k sessions would be 10k deep copies).
	if err := c.e.opts.Reader.List(ctx, &all, client.InNamespace(c.req.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	pol, err := c.e.sessionPolicy(ctx, c.req.Namespace)
	if err != nil {
		return nil, err
	}
	rows := sessionrows.ListRows(all.Items, p, c.e.now(), func(s *v1.AgentSession) bool {
		ok, _ := c.sees(ctx, pol, s)
		return ok
	})
	if p.MessageLimit > 0 {
		for i := range rows {
			if rows[i].SessionID == "" {
				continue
			}
			page, err := c.e.opts.Store.Read(ctx, c.req.Namespace, rows[i].SessionID, transcript.ReadOptions{Limit: p.MessageLimit})
			if err == nil {
				rows[i].Messages = page.Messages
			}
		}
	}
	return map[string]any{"sessions": rows, "count": len(rows)}, nil
}
