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
	"cmp"
	"context"
	"encoding/json"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

type statusArgs struct {
	SessionKey   string `json:"sessionKey"`
	ChangesSince Number `json:"changesSince"`
}

// StatusCard is the session_status result.
type StatusCard struct {
	SessionKey    string                 `json:"sessionKey"`
	SessionID     string                 `json:"sessionId"`
	AgentID       string                 `json:"agentId,omitempty"`
	Label         string                 `json:"label,omitempty"`
	Phase         string                 `json:"phase,omitempty"`
	Model         string                 `json:"model,omitempty"`
	ModelOverride string                 `json:"modelOverride,omitempty"`
	ThinkingLevel string                 `json:"thinkingLevel,omitempty"`
	Usage         sessionsv1alpha1.Usage `json:"usage"`
	TotalTokens   int64                  `json:"totalTokens"`
	ContextTokens int64                  `json:"contextTokens"`
	MessageCount  int64                  `json:"messageCount"`
	UpdatedAt     int64                  `json:"updatedAt,omitempty"`
	ActiveRunID   string                 `json:"activeRunId,omitempty"`
	// RunsInFlight are the session's unfinished sends and sub-agent runs.
	RunsInFlight []RunInFlight `json:"runsInFlight"`
	StateVersion int64         `json:"stateVersion"`
	// Changes answer changesSince: the changes after that version, oldest first.
	Changes     []Change `json:"changes,omitempty"`
	MoreChanges bool     `json:"moreChanges,omitempty"`
}

// RunInFlight is an unfinished send (from the session) or run (requested by it).
type RunInFlight struct {
	Kind            string `json:"kind"` // send or run
	Name            string `json:"name"`
	RunID           string `json:"runId,omitempty"`
	Phase           string `json:"phase,omitempty"`
	Target          string `json:"target,omitempty"`
	ChildSessionKey string `json:"childSessionKey,omitempty"`
	Label           string `json:"label,omitempty"`
}

func statusTool() Tool {
	return Tool{Name: "session_status",
		Description: "A status card for this session or a visible one: usage and cost, model and thinking level, runs in flight, and a stateVersion; changesSince: <version> lists what changed since (messages from people, child outcomes, compactions).",
		Schema: Schema(map[string]any{
			"sessionKey":   map[string]any{"type": "string", "description": "session key, sessionId, or main (default: this session)"},
			"changesSince": map[string]any{"type": "number", "description": "a stateVersion from an earlier call: list the changes after it"},
		}),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a statusArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			ref := cmp.Or(a.SessionKey, c.sessionKey())
			if ref == "" {
				return nil, errors.New("sessionKey is required")
			}
			return c.Status(ctx, ref, max(a.ChangesSince.Or(-1), -1))
		}}
}

// visibleSession resolves ref to a session the caller sees.
func (c *Call) visibleSession(ctx context.Context, ref string) (*sessionsv1alpha1.AgentSession, error) {
	target, err := c.resolveSession(ctx, ref)
	if err != nil {
		return nil, err
	}
	pol, err := c.sessionPolicy(ctx)
	if err != nil {
		return nil, err
	}
	if ok, why := c.sees(ctx, pol, target); !ok {
		return nil, ForbiddenError{Why: why}
	}
	return target, nil
}

// Status is the card of the session ref names, with the changes after since (none when
// since < 0). Without a Store the card has no stateVersion.
func (c *Call) Status(ctx context.Context, ref string, since int64) (*StatusCard, error) {
	s, err := c.visibleSession(ctx, ref)
	if err != nil {
		return nil, err
	}
	card := cardOf(s, c.agentModel(ctx, s))
	if card.RunsInFlight, err = c.runsInFlight(ctx, s.Spec.Key); err != nil {
		return nil, err
	}
	if c.Store == nil || s.Status.SessionID == "" || s.Status.Phase == sessionsv1alpha1.SessionArchived {
		return card, nil
	}
	read := func(ctx context.Context, o transcript.ReadOptions) (transcript.Page, error) {
		return c.readTranscript(ctx, s.Name, s.Status.SessionID, o)
	}
	card.StateVersion, card.Changes, card.MoreChanges, err = stateOf(ctx, read, since)
	return card, err
}

// agentModel is the model name of s's Agent, what runs when the session overrides none.
func (c *Call) agentModel(ctx context.Context, s *sessionsv1alpha1.AgentSession) string {
	if c.Agent != nil && c.Agent.Name == s.Spec.AgentID {
		return c.Agent.Spec.Model.Name
	}
	a, err := c.lookup().Agent(ctx, c.Namespace, s.Spec.AgentID)
	if err != nil || a == nil {
		return ""
	}
	return a.Spec.Model.Name
}

// cardOf is the card's fields read from the session object.
func cardOf(s *sessionsv1alpha1.AgentSession, agentModel string) *StatusCard {
	card := &StatusCard{SessionKey: s.Spec.Key, SessionID: s.Status.SessionID, AgentID: s.Spec.AgentID, Label: s.Spec.Label,
		Phase: string(s.Status.Phase), Model: cmp.Or(s.Spec.Model, agentModel), ModelOverride: s.Spec.Model,
		ThinkingLevel: string(s.Spec.ThinkingLevel), TotalTokens: s.Status.TotalTokens, ContextTokens: s.Status.ContextTokens,
		MessageCount: s.Status.MessageCount, ActiveRunID: s.Status.ActiveRunID, RunsInFlight: []RunInFlight{}}
	if s.Status.Usage != nil {
		card.Usage = *s.Status.Usage
	}
	if t := s.Status.UpdatedAt; t != nil {
		card.UpdatedAt = t.UnixMilli()
	}
	return card
}

// runsInFlight are the unfinished sends from key and runs requested by key.
func (c *Call) runsInFlight(ctx context.Context, key string) ([]RunInFlight, error) {
	var sends sessionsv1alpha1.SessionSendList
	if err := c.Reader.List(ctx, &sends, client.InNamespace(c.Namespace), client.MatchingFields{cacheindex.SendFrom: key}); err != nil {
		return nil, err
	}
	var runs sessionsv1alpha1.SubagentRunList
	if err := c.Reader.List(ctx, &runs, client.InNamespace(c.Namespace), client.MatchingFields{cacheindex.RunRequester: key}); err != nil {
		return nil, err
	}
	out := []RunInFlight{}
	for i := range sends.Items {
		s := &sends.Items[i]
		if !s.Status.Finished() {
			out = append(out, RunInFlight{Kind: "send", Name: s.Name, RunID: s.Status.RunID, Phase: string(s.Status.Phase),
				Target: s.TargetRef()})
		}
	}
	for i := range runs.Items {
		r := &runs.Items[i]
		if !r.Status.Finished() {
			out = append(out, RunInFlight{Kind: "run", Name: r.Name, RunID: string(r.UID), Phase: string(r.Status.Phase),
				ChildSessionKey: r.Status.ChildSessionKey, Label: r.Spec.Label})
		}
	}
	return out, nil
}
