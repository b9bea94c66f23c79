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

package events

import (
	"encoding/json"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The phases of a sessions.changed event.
const (
	PhaseCreated  = "created"
	PhaseUpdated  = "updated"
	PhaseArchived = "archived"
	PhaseMessage  = "message"
)

// SessionChange is the payload of sessions.changed. Stats is set for phase "message" (the
// transcript's counters and preview after the append); Object carries the session's
// summary for the other phases.
type SessionChange struct {
	Phase      string            `json:"phase"`
	SessionKey string            `json:"sessionKey"`
	Name       string            `json:"name"`
	SessionID  string            `json:"sessionId,omitempty"`
	Stats      *transcript.Stats `json:"stats,omitempty"`
	Object     json.RawMessage   `json:"object,omitempty"`
}

// SessionMessage is the payload of session.message: the appended record as stored.
type SessionMessage struct {
	SessionKey string          `json:"sessionKey"`
	SessionID  string          `json:"sessionId"`
	Seq        int64           `json:"seq"`
	Record     json.RawMessage `json:"record"`
}

// PublishCommit publishes one transcript commit: a session.message per record, then one
// sessions.changed of phase "message" with the counters after the commit.
func (h *Hub) PublishCommit(hdr transcript.SessionHeader, seqs []int64, lines [][]byte, stats transcript.Stats) {
	name := hdr.Name
	if name == "" {
		name = sessionkey.ObjectName(hdr.SessionKey)
	}
	base := Event{Namespace: hdr.Namespace, SessionKey: hdr.SessionKey, Name: name}
	for i, line := range lines {
		e := base
		e.Kind = KindSessionMessage
		e.Data, _ = json.Marshal(SessionMessage{SessionKey: hdr.SessionKey, SessionID: hdr.SessionID, Seq: seqs[i], Record: line})
		h.Publish(e)
	}
	stats.Path = "" // the store's file path is no one's business outside it
	e := base
	e.Kind = KindSessionsChanged
	e.Data, _ = json.Marshal(SessionChange{Phase: PhaseMessage, SessionKey: hdr.SessionKey, Name: name, SessionID: hdr.SessionID, Stats: &stats})
	h.Publish(e)
}

// PublishObject publishes a change of an object: kind is sessions.changed, sends.changed
// or runs.changed; sessionKey and name are the session it belongs to (for a send or run,
// the session that started it), object its JSON summary.
func (h *Hub) PublishObject(kind, phase, namespace, sessionKey, name string, object []byte) {
	data, _ := json.Marshal(SessionChange{Phase: phase, SessionKey: sessionKey, Name: name, Object: object})
	h.Publish(Event{Kind: kind, Namespace: namespace, SessionKey: sessionKey, Name: name, Data: data})
}

// SessionDelta is the payload of session.delta: a piece of a running turn's reply, sent live
// and never logged (see transcript.Delta).
type SessionDelta struct {
	SessionKey string `json:"sessionKey"`
	SessionID  string `json:"sessionId"`
	transcript.Delta
}

// PublishDelta publishes a piece of a running reply to the subscribers of this moment only:
// pieces take no ID and stay out of the resume log, so they neither push real changes out
// of it nor come back to a client resuming after the message they made was stored.
func (h *Hub) PublishDelta(hdr transcript.SessionHeader, d transcript.Delta) {
	name := hdr.Name
	if name == "" {
		name = sessionkey.ObjectName(hdr.SessionKey)
	}
	data, _ := json.Marshal(SessionDelta{SessionKey: hdr.SessionKey, SessionID: hdr.SessionID, Delta: d})
	h.fanOut(Event{Kind: KindSessionDelta, Namespace: hdr.Namespace, SessionKey: hdr.SessionKey, Name: name, Data: data})
}
