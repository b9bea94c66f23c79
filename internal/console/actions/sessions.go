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

package actions

import (
	"context"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// consoleSession is a row of the console's first session list: sessions_list's row (the
// spec's shape, which has no counters) with what the console's columns and usage show. The
// event stream keeps the same fields current from the session objects and the commits.
type consoleSession struct {
	sessionrows.SessionRow
	Label              string                  `json:"label,omitempty"`
	SpawnedBy          string                  `json:"spawnedBy,omitempty"`
	MessageCount       int64                   `json:"messageCount"`
	LastMessagePreview string                  `json:"lastMessagePreview,omitempty"`
	InputTokens        int64                   `json:"inputTokens,omitempty"`
	OutputTokens       int64                   `json:"outputTokens,omitempty"`
	Usage              *sessionsv1alpha1.Usage `json:"usage,omitempty"`
	// Sandbox is the session's sandbox (status.sandbox), when it has one.
	Sandbox *sessionsv1alpha1.SessionSandboxStatus `json:"sandbox,omitempty"`
}

// sessionsOf lists the namespace's sessions as sessions_list does for a person (what RBAC
// lets the caller list, newest first, at most limit), each with its counters and usage.
func sessionsOf(ctx context.Context, call *sessiontools.Call, limit sessiontools.Number) ([]consoleSession, error) {
	all, err := sessiontools.Sessions(ctx, call.Reader, call.Namespace)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]*sessionsv1alpha1.AgentSession, len(all))
	for _, s := range all {
		byKey[s.Spec.Key] = s
	}
	p, _ := sessionrows.NewListParams(nil, limit.Or(sessionrows.MaxListLimit), 0, 0) // no messages: always in range
	rows := sessionrows.ListRows(all, p, call.Now(), nil)
	out := make([]consoleSession, 0, len(rows))
	for _, r := range rows {
		s := byKey[r.Key]
		out = append(out, consoleSession{
			SessionRow: r, Label: s.Spec.Label, SpawnedBy: s.Spec.SpawnedBy,
			MessageCount: s.Status.MessageCount, LastMessagePreview: s.Status.LastMessagePreview,
			InputTokens: s.Status.InputTokens, OutputTokens: s.Status.OutputTokens, Usage: s.Status.Usage, Sandbox: s.Status.Sandbox,
		})
	}
	return out, nil
}
