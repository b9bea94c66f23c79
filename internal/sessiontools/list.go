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

package sessiontools

import (
	"context"
	"encoding/json"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

type listArgs struct {
	Kinds         []string `json:"kinds"`
	Limit         Number   `json:"limit"`
	ActiveMinutes Number   `json:"activeMinutes"`
	MessageLimit  Number   `json:"messageLimit"`
	// The gateway's newer filters.
	Label              string `json:"label"`
	AgentID            string `json:"agentId"`
	Search             string `json:"search"`
	Archived           bool   `json:"archived"`
	IncludeLastMessage bool   `json:"includeLastMessage"`
}

// params are the arguments as sessionrows' defaulted, clamped parameters, or the error of
// one out of its bounds.
func (a listArgs) params() (sessionrows.ListParams, error) {
	p, err := sessionrows.NewListParams(a.Kinds, a.Limit.Or(sessionrows.DefaultListLimit), a.ActiveMinutes.Or(0), a.MessageLimit.Or(0))
	p.Label, p.AgentID, p.Search, p.Archived, p.IncludeLastMessage = a.Label, a.AgentID, a.Search, a.Archived, a.IncludeLastMessage
	return p, err
}

func listTool() Tool {
	return Tool{Name: "sessions_list",
		Description: "List sessions visible to this session, most recently updated first.",
		Schema: Schema(map[string]any{
			"kinds":         map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"main", "group", "cron", "hook", "node", "other"}}},
			"limit":         map[string]any{"type": "number", "description": "max rows (default 50; a larger value is cut to 200)"},
			"activeMinutes": map[string]any{"type": "number", "description": "only sessions updated within N minutes"},
			"messageLimit": map[string]any{"type": "number", "minimum": 0, "maximum": sessionrows.MaxListMessageLimit,
				"description": "include the last N messages of each session: 0 to 20, default 0 (none); outside that is an error, never cut"},
			"label":              map[string]any{"type": "string", "description": "only sessions with this label"},
			"agentId":            map[string]any{"type": "string", "description": "only sessions of this agent"},
			"search":             map[string]any{"type": "string", "description": "only sessions whose key, label or display name contains this text"},
			"archived":           map[string]any{"type": "boolean", "description": "list archived sessions, retired ones too, instead of active ones (default false)"},
			"includeLastMessage": map[string]any{"type": "boolean", "description": "include each session's latest message (default false)"},
		}),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a listArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			p, err := a.params()
			if err != nil {
				return nil, err
			}
			return c.list(ctx, p)
		}}
}

// SessionLister lists a namespace's sessions as the cache holds them, neither copied nor
// gathered into a new list: 100,000 sessions are 100,000 pointers, not 100 MB of structs.
// The caller only reads them.
type SessionLister interface {
	ListSessions(ctx context.Context, namespace string) ([]*sessionsv1alpha1.AgentSession, error)
}

// NewestLister walks a namespace's sessions in sessions_list's order (sessionrows.Recency),
// so a page reads the sessions it shows and those its filters skip, not all of them. ok is
// false when it keeps no such order; the caller then lists.
type NewestLister interface {
	NewestSessions(ctx context.Context, namespace string, yield func(*sessionsv1alpha1.AgentSession) bool) (ok bool, err error)
}

// sessions are the namespace's sessions, through the Reader's SessionLister when it has one.
func (c *Call) sessions(ctx context.Context) ([]*sessionsv1alpha1.AgentSession, error) {
	return Sessions(ctx, c.Reader, c.Namespace)
}

// Sessions are namespace's sessions for reading only, through r's SessionLister when it
// has one.
func Sessions(ctx context.Context, r client.Reader, namespace string) ([]*sessionsv1alpha1.AgentSession, error) {
	if l, ok := r.(SessionLister); ok {
		return l.ListSessions(ctx, namespace)
	}
	return ListSessions(ctx, r, namespace)
}

// rows are the page's rows, walked newest first where the Reader keeps that order.
func (c *Call) rows(ctx context.Context, p sessionrows.ListParams, visible func(*sessionsv1alpha1.AgentSession) bool) ([]sessionrows.SessionRow, error) {
	now := c.clock().Now()
	if n, ok := c.Reader.(NewestLister); ok {
		var walked bool
		var err error
		rows := sessionrows.PageRows(func(yield func(*sessionsv1alpha1.AgentSession) bool) {
			walked, err = n.NewestSessions(ctx, c.Namespace, yield)
		}, p, now, visible)
		if err != nil || walked {
			return rows, err
		}
	}
	all, err := c.sessions(ctx)
	if err != nil {
		return nil, err
	}
	return sessionrows.ListRows(all, p, now, visible), nil
}

// ListSessions lists namespace's sessions through r for reading only. An informer cache's
// objects are taken from its namespace index as they are (100,000 sessions are 100,000
// pointers, not 72 MB of struct copies); another reader's are not deep-copied.
func ListSessions(ctx context.Context, r client.Reader, namespace string) ([]*sessionsv1alpha1.AgentSession, error) {
	if informers, ok := r.(cache.Informers); ok {
		inf, err := informers.GetInformer(ctx, &sessionsv1alpha1.AgentSession{}, cache.BlockUntilSynced(true))
		if err != nil {
			return nil, err
		}
		if shared, ok := inf.(toolscache.SharedIndexInformer); ok {
			objs, err := shared.GetIndexer().ByIndex(toolscache.NamespaceIndex, namespace)
			if err != nil {
				return nil, err
			}
			out := make([]*sessionsv1alpha1.AgentSession, 0, len(objs))
			for _, o := range objs {
				if s, ok := o.(*sessionsv1alpha1.AgentSession); ok {
					out = append(out, s)
				}
			}
			return out, nil
		}
	}
	var all sessionsv1alpha1.AgentSessionList
	if err := r.List(ctx, &all, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return sessionrows.Pointers(all.Items), nil
}

func (c *Call) list(ctx context.Context, p sessionrows.ListParams) (any, error) {
	visible, err := c.visibility(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.rows(ctx, p, visible)
	if p.Archived {
		rows, err = c.archivedRows(ctx, p, visible)
	}
	if err != nil {
		return nil, err
	}
	if p.MessageLimit > 0 || p.IncludeLastMessage {
		// A session whose transcript the caller may not read is listed without messages.
		for i := range rows {
			if rows[i].SessionID == "" {
				continue
			}
			page, err := c.readSession(ctx, rowSession(&rows[i]), transcript.ReadOptions{Limit: max(p.MessageLimit, 1)})
			if err != nil {
				continue
			}
			msgs, _ := redactRecords(page.Messages)
			if p.MessageLimit > 0 {
				rows[i].Messages = msgs
			}
			if p.IncludeLastMessage && len(msgs) > 0 {
				rows[i].LastMessage = &msgs[len(msgs)-1]
			}
		}
	}
	return map[string]any{"sessions": rows, "count": len(rows)}, nil
}

// rowSession is what reading a row's transcript needs of its session.
func rowSession(r *sessionrows.SessionRow) *sessionsv1alpha1.AgentSession {
	s := &sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Key: r.Key}, Status: sessionsv1alpha1.AgentSessionStatus{SessionID: r.SessionID}}
	s.Name = r.Name
	if r.Archived {
		s.Status.Phase = sessionsv1alpha1.SessionArchived
	}
	return s
}
