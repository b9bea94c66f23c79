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

// Package sessionrows shapes AgentSessions into the rows of sessions_list, as the seeds give
// them. The turn engine, the kubectl plugin and the MCP endpoint share it; it links no engine.
package sessionrows

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// sessions_list bounds, as the seeds leave them to the server: limit is clamped, as they
// say; messageLimit outside 0..MaxListMessageLimit is refused, never cut.
const (
	DefaultListLimit    = 50
	MaxListLimit        = 200
	MaxListMessageLimit = 20
)

// SessionRow is one row of sessions_list, in the seeds' row shape.
type SessionRow struct {
	// Name is the AgentSession's object name, what access to its transcript is asked on.
	Name            string              `json:"-"`
	Key             string              `json:"key"`
	Kind            string              `json:"kind"`
	Channel         string              `json:"channel"`
	DisplayName     string              `json:"displayName,omitempty"`
	UpdatedAt       int64               `json:"updatedAt"`
	SessionID       string              `json:"sessionId"`
	Model           string              `json:"model,omitempty"`
	ContextTokens   int64               `json:"contextTokens"`
	TotalTokens     int64               `json:"totalTokens"`
	ThinkingLevel   string              `json:"thinkingLevel,omitempty"`
	VerboseLevel    string              `json:"verboseLevel,omitempty"`
	SystemSent      bool                `json:"systemSent"`
	AbortedLastRun  bool                `json:"abortedLastRun"`
	SendPolicy      string              `json:"sendPolicy,omitempty"`
	LastChannel     string              `json:"lastChannel,omitempty"`
	LastTo          string              `json:"lastTo,omitempty"`
	DeliveryContext *DeliveryContext    `json:"deliveryContext,omitempty"`
	TranscriptPath  string              `json:"transcriptPath,omitempty"`
	Messages        []transcript.Record `json:"messages,omitempty"`
	Label           string              `json:"label,omitempty"`
	AgentID         string              `json:"agentId,omitempty"`
	Archived        bool                `json:"archived,omitempty"`
	// Retired says the archived session's object is gone (the SessionPolicy's retention):
	// the transcript store's record lists it, and restore brings the object back.
	Retired bool `json:"retired,omitempty"`
	// LastMessage is the latest message, with includeLastMessage.
	LastMessage *transcript.Record `json:"lastMessage,omitempty"`
}

// ListParams are sessions_list's parameters, already defaulted and clamped.
type ListParams struct {
	Kinds         []string
	Limit         int
	ActiveMinutes int
	MessageLimit  int
	// Label and AgentID, when set, list only the sessions with that label or agent id;
	// Search only those whose key, label or display name contains it (case-insensitive).
	Label   string
	AgentID string
	Search  string
	// Archived lists the archived sessions instead of the active ones.
	Archived bool
	// IncludeLastMessage adds each session's latest message to its row.
	IncludeLastMessage bool
}

// DeliveryContext is a row's normalized delivery context, the seeds' { channel, to,
// accountId }.
type DeliveryContext struct {
	Channel   string `json:"channel,omitempty"`
	To        string `json:"to,omitempty"`
	AccountID string `json:"accountId,omitempty"`
}

// NewListParams applies the defaults and the limit's clamp to raw parameters; a messageLimit
// outside 0..MaxListMessageLimit is an error naming the bounds.
func NewListParams(kinds []string, limit, activeMinutes, messageLimit int64) (ListParams, error) {
	if messageLimit < 0 || messageLimit > MaxListMessageLimit {
		return ListParams{}, fmt.Errorf("messageLimit %d is out of range: 0 to %d messages per session; read more of one session with sessions_history",
			messageLimit, MaxListMessageLimit)
	}
	return ListParams{
		Kinds:         kinds,
		Limit:         int(max(1, min(limit, MaxListLimit))),
		ActiveMinutes: int(max(activeMinutes, 0)),
		MessageLimit:  int(messageLimit),
	}, nil
}

// deliveryContextOf is a session's delivery context as a row gives it: the session's own,
// each of channel and to falling back to lastChannel and lastTo; nil when none is known.
func deliveryContextOf(s *sessionsv1alpha1.AgentSession) *DeliveryContext {
	var d DeliveryContext
	if dc := s.Spec.DeliveryContext; dc != nil {
		d = DeliveryContext{Channel: dc.Channel, To: dc.To, AccountID: dc.AccountID}
	}
	d.Channel, d.To = cmp.Or(d.Channel, s.Spec.LastChannel), cmp.Or(d.To, s.Spec.LastTo)
	if d == (DeliveryContext{}) {
		return nil
	}
	return &d
}

// RowOf is a session's row (without messages).
func RowOf(s *sessionsv1alpha1.AgentSession) SessionRow {
	r := SessionRow{
		Name: s.Name, Key: s.Spec.Key, Kind: string(s.Status.Kind), Channel: s.Status.Channel,
		DisplayName: s.Spec.DisplayName, SessionID: s.Status.SessionID, Model: s.Spec.Model,
		ContextTokens: s.Status.ContextTokens, TotalTokens: s.Status.TotalTokens,
		ThinkingLevel: string(s.Spec.ThinkingLevel), VerboseLevel: s.Spec.VerboseLevel,
		SystemSent: s.Status.SystemSent, AbortedLastRun: s.Status.AbortedLastRun,
		SendPolicy: string(s.Spec.SendPolicy), LastChannel: s.Spec.LastChannel, LastTo: s.Spec.LastTo,
		DeliveryContext: deliveryContextOf(s), TranscriptPath: s.Status.TranscriptPath,
		UpdatedAt: UpdatedAt(s), Label: s.Spec.Label, AgentID: s.Spec.AgentID,
		Archived: s.Status.Phase == sessionsv1alpha1.SessionArchived,
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

// UpdatedAt is when the session last changed, in ms, what sessions_list orders by: its
// transcript's last append, else its creation.
func UpdatedAt(s *sessionsv1alpha1.AgentSession) int64 {
	if t := s.Status.UpdatedAt; t != nil {
		return t.UnixMilli()
	}
	return s.CreationTimestamp.UnixMilli()
}

// newest returns the limit first of items in order, sorted. It keeps a heap of the limit
// first seen so far whose root is the last of them, so each item costs one comparison with
// the root and, if it comes before, log limit moves.
func newest[T any](items []T, limit int, order func(a, b T) int) []T {
	if len(items) <= limit {
		slices.SortFunc(items, order)
		return items
	}
	h := slices.Clone(items[:limit])
	// down restores the heap below i: a parent comes after its children in order.
	down := func(i int) {
		for {
			worst, l, r := i, 2*i+1, 2*i+2
			if l < len(h) && order(h[l], h[worst]) > 0 {
				worst = l
			}
			if r < len(h) && order(h[r], h[worst]) > 0 {
				worst = r
			}
			if worst == i {
				return
			}
			h[i], h[worst] = h[worst], h[i]
			i = worst
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, it := range items[limit:] {
		if order(it, h[0]) < 0 {
			h[0] = it
			down(0)
		}
	}
	slices.SortFunc(h, order)
	return h
}

// Pointers points at each of items, for ListRows.
func Pointers(items []sessionsv1alpha1.AgentSession) []*sessionsv1alpha1.AgentSession {
	out := make([]*sessionsv1alpha1.AgentSession, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// kindOf is a session's kind without building its row.
func kindOf(s *sessionsv1alpha1.AgentSession) string {
	if s.Status.Kind != "" {
		return string(s.Status.Kind)
	}
	k, _ := sessionkey.Parse(s.Spec.Key)
	return string(k.Kind)
}

// activeCutoff is the oldest update activeMinutes keeps, in Unix milliseconds.
func activeCutoff(p ListParams, now time.Time) int64 {
	return now.Add(-time.Duration(p.ActiveMinutes) * time.Minute).UnixMilli()
}

// listed says whether sessions_list shows s, and when it was updated.
func listed(s *sessionsv1alpha1.AgentSession, p ListParams, cutoff int64, visible func(*sessionsv1alpha1.AgentSession) bool) (int64, bool) {
	if sessionkey.IsReserved(s.Spec.Key) || (s.Status.Phase == sessionsv1alpha1.SessionArchived) != p.Archived {
		return 0, false
	}
	if !matches(s, p) {
		return 0, false
	}
	// Cheap filters first: visibility may look up parents.
	if len(p.Kinds) > 0 && !slices.Contains(p.Kinds, kindOf(s)) {
		return 0, false
	}
	u := UpdatedAt(s)
	if p.ActiveMinutes > 0 && u < cutoff {
		return 0, false
	}
	if visible != nil && !visible(s) {
		return 0, false
	}
	return u, true
}

// Listed says whether sessions_list with p shows s at now (ListRows' filters, one session).
func Listed(s *sessionsv1alpha1.AgentSession, p ListParams, now time.Time, visible func(*sessionsv1alpha1.AgentSession) bool) bool {
	_, ok := listed(s, p, activeCutoff(p, now), visible)
	return ok
}

// ListRows selects, orders (most recently updated first) and limits the rows of
// sessions_list: reserved and archived sessions never show, kinds and activeMinutes filter,
// visible decides the rest.
func ListRows(sessions []*sessionsv1alpha1.AgentSession, p ListParams, now time.Time, visible func(*sessionsv1alpha1.AgentSession) bool) []SessionRow {
	type candidate struct {
		updated int64
		s       *sessionsv1alpha1.AgentSession
	}
	var cands []candidate
	cutoff := activeCutoff(p, now)
	for _, s := range sessions {
		if u, ok := listed(s, p, cutoff, visible); ok {
			cands = append(cands, candidate{u, s})
		}
	}
	// Order small pointers, and build rows only for the page: 50 of 10,000 sessions is
	// 50 rows, not 10,000. Only the page is sorted: a bounded heap keeps the newest Limit
	// candidates, n log Limit instead of n log n.
	order := func(a, b candidate) int {
		if a.updated != b.updated {
			if a.updated > b.updated {
				return -1
			}
			return 1
		}
		return strings.Compare(a.s.Spec.Key, b.s.Spec.Key)
	}
	cands = newest(cands, p.Limit, order)
	rows := make([]SessionRow, 0, len(cands))
	for _, c := range cands {
		rows = append(rows, RowOf(c.s))
	}
	return rows
}

// matches applies the label, agentId and search filters.
func matches(s *sessionsv1alpha1.AgentSession, p ListParams) bool {
	if p.Label != "" && s.Spec.Label != p.Label {
		return false
	}
	if p.AgentID != "" && s.Spec.AgentID != p.AgentID {
		return false
	}
	return transcript.MatchesSearch(p.Search, s.Spec.Key, s.Spec.Label, s.Spec.DisplayName)
}
