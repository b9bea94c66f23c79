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
	"slices"
	"strings"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// sessions_list bounds, as the seeds leave them to the server.
const (
	DefaultListLimit    = 50
	MaxListLimit        = 200
	MaxListMessageLimit = 20
)

// SessionRow is one row of sessions_list, in the seeds' row shape.
type SessionRow struct {
	Key             string                            `json:"key"`
	Kind            string                            `json:"kind"`
	Channel         string                            `json:"channel"`
	DisplayName     string                            `json:"displayName,omitempty"`
	UpdatedAt       int64                             `json:"updatedAt"`
	SessionID       string                            `json:"sessionId"`
	Model           string                            `json:"model,omitempty"`
	ContextTokens   int64                             `json:"contextTokens"`
	TotalTokens     int64                             `json:"totalTokens"`
	ThinkingLevel   string                            `json:"thinkingLevel,omitempty"`
	VerboseLevel    string                            `json:"verboseLevel,omitempty"`
	SystemSent      bool                              `json:"systemSent"`
	AbortedLastRun  bool                              `json:"abortedLastRun"`
	SendPolicy      string                            `json:"sendPolicy,omitempty"`
	LastChannel     string                            `json:"lastChannel,omitempty"`
	LastTo          string                            `json:"lastTo,omitempty"`
	DeliveryContext *sessionsv1alpha1.DeliveryContext `json:"deliveryContext,omitempty"`
	TranscriptPath  string                            `json:"transcriptPath,omitempty"`
	Messages        []transcript.Record               `json:"messages,omitempty"`
}

// ListParams are sessions_list's parameters, already defaulted and clamped.
type ListParams struct {
	Kinds         []string
	Limit         int
	ActiveMinutes int
	MessageLimit  int
}

// NewListParams applies the defaults and clamps to raw parameters.
func NewListParams(kinds []string, limit, activeMinutes, messageLimit int64) ListParams {
	return ListParams{
		Kinds:         kinds,
		Limit:         int(clamp(limit, 1, MaxListLimit)),
		ActiveMinutes: int(max(activeMinutes, 0)),
		MessageLimit:  int(clamp(messageLimit, 0, MaxListMessageLimit)),
	}
}

// RowOf is a session's row (without messages).
func RowOf(s *sessionsv1alpha1.AgentSession) SessionRow {
	r := SessionRow{
		Key: s.Spec.Key, Kind: string(s.Status.Kind), Channel: s.Status.Channel,
		DisplayName: s.Spec.DisplayName, SessionID: s.Status.SessionID, Model: s.Spec.Model,
		ContextTokens: s.Status.ContextTokens, TotalTokens: s.Status.TotalTokens,
		ThinkingLevel: s.Spec.ThinkingLevel, VerboseLevel: s.Spec.VerboseLevel,
		SystemSent: s.Status.SystemSent, AbortedLastRun: s.Status.AbortedLastRun,
		SendPolicy: string(s.Spec.SendPolicy), LastChannel: s.Spec.LastChannel, LastTo: s.Spec.LastTo,
		DeliveryContext: s.Spec.DeliveryContext, TranscriptPath: s.Status.TranscriptPath,
		UpdatedAt: updatedAt(s),
	}
	// The controller records kind and channel in status; parse the key only before it has.
	if r.Kind == "" || r.Channel == "" {
		k, _ := sessionkey.Parse(s.Spec.Key)
		if r.Kind == "" {
			r.Kind = string(k.Kind)
		}
		if r.Channel == "" {
			r.Channel = sessionkey.ChannelOf(k, string(s.Spec.Channel), s.Spec.LastChannel)
		}
	}
	return r
}

// updatedAt is when the session last changed, in ms: its transcript's last append, else its
// creation.
func updatedAt(s *sessionsv1alpha1.AgentSession) int64 {
	if t := s.Status.UpdatedAt; t != nil {
		return t.UnixMilli()
	}
	return s.CreationTimestamp.UnixMilli()
}

// kindOf is a session's kind without building its row.
func kindOf(s *sessionsv1alpha1.AgentSession) string {
	if s.Status.Kind != "" {
		return string(s.Status.Kind)
	}
	k, _ := sessionkey.Parse(s.Spec.Key)
	return string(k.Kind)
}

// ListRows selects, orders (most recently updated first) and limits the rows of
// sessions_list: reserved and archived sessions never show, kinds and activeMinutes filter,
// visible decides the rest.
func ListRows(sessions []sessionsv1alpha1.AgentSession, p ListParams, now time.Time, visible func(*sessionsv1alpha1.AgentSession) bool) []SessionRow {
	var rows []SessionRow
	cutoff := now.Add(-time.Duration(p.ActiveMinutes) * time.Minute).UnixMilli()
	for i := range sessions {
		s := &sessions[i]
		if sessionkey.IsReserved(s.Spec.Key) || s.Status.Phase == sessionsv1alpha1.SessionArchived {
			continue
		}
		// Cheap filters first: rows are built only for the sessions that pass them.
		if len(p.Kinds) > 0 && !slices.Contains(p.Kinds, kindOf(s)) {
			continue
		}
		if p.ActiveMinutes > 0 && updatedAt(s) < cutoff {
			continue
		}
		if visible != nil && !visible(s) {
			continue
		}
		rows = append(rows, RowOf(s))
	}
	slices.SortStableFunc(rows, func(a, b SessionRow) int {
		if a.UpdatedAt != b.UpdatedAt {
			if a.UpdatedAt > b.UpdatedAt {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	if len(rows) > p.Limit {
		rows = rows[:p.Limit]
	}
	return rows
}

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
			return c.list(ctx, NewListParams(a.Kinds, a.Limit.or(DefaultListLimit), a.ActiveMinutes.or(0), a.MessageLimit.or(0)))
		}}
}

func (c *toolCall) list(ctx context.Context, p ListParams) (any, error) {
	var all sessionsv1alpha1.AgentSessionList
	// Read-only use: the cache's objects are not copied (10k sessions would be 10k deep copies).
	if err := c.e.opts.Reader.List(ctx, &all, client.InNamespace(c.req.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	pol, err := c.e.sessionPolicy(ctx, c.req.Namespace)
	if err != nil {
		return nil, err
	}
	rows := ListRows(all.Items, p, c.e.now(), func(s *sessionsv1alpha1.AgentSession) bool {
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
