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

// Package events is the live event stream of one transcript-store: every change to a
// session (created, updated, archived, a transcript append), to a send or to a run, as
// server-sent events that a client resumes with Last-Event-ID. The store's commits and the
// sidecar's informers publish into a Hub; the HTTP handler fans the Hub out to subscribers,
// each authorized per session as the caller.
package events

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// The kinds of events. Reset tells a resuming client that the events it missed are older
// than the log: it must reload what it shows.
const (
	KindSessionsChanged = "sessions.changed"
	KindSessionMessage  = "session.message"
	KindSendsChanged    = "sends.changed"
	KindRunsChanged     = "runs.changed"
	KindSessionDelta    = "session.delta"
	// KindApprovalsChanged: a tool call began to wait for a person (requested), was
	// decided (decided) or expired (expired); judged by the calling session.
	KindApprovalsChanged = "approvals.changed"
	KindReset            = "reset"
)

// Event is one published change. Name is the AgentSession's object name the event is
// authorized against; Data is the event's single-line JSON payload.
type Event struct {
	ID         int64
	Kind       string
	Namespace  string
	SessionKey string
	Name       string
	Data       []byte
}

// DefaultLogSize bounds the resume log.
const DefaultLogSize = 4096

// subBuffer is how many events a subscriber may be behind before it is cut off; a cut-off
// client reconnects with Last-Event-ID and catches up from the log.
const subBuffer = 256

// Hub keeps the last events in a ring and fans each new one out to its subscribers. IDs
// carry the hub's epoch, so an ID from before a restart asks for a reset, not a wrong resume.
type Hub struct {
	epoch string

	mu   sync.Mutex
	next int64
	ring []Event // ring[(id-1) % len(ring)] holds id, for the last len(ring) ids
	subs map[*Subscription]struct{}
}

// NewHub returns a hub keeping the last size events (DefaultLogSize when size <= 0), with
// an epoch that tells its IDs from another process's (the start time is a fine one).
func NewHub(size int, epoch string) *Hub {
	if size <= 0 {
		size = DefaultLogSize
	}
	return &Hub{epoch: epoch, next: 1, ring: make([]Event, size), subs: map[*Subscription]struct{}{}}
}

// FormatID is the SSE id of an event of this hub.
func (h *Hub) FormatID(id int64) string { return h.epoch + "-" + strconv.FormatInt(id, 10) }

// ParseID reads a Last-Event-ID: the sequence number and whether it is of this hub.
func (h *Hub) ParseID(s string) (int64, bool) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 || s[:i] != h.epoch {
		return 0, false
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 64)
	return n, err == nil && n >= 0
}

// Publish gives e the next ID, logs it and hands it to every subscriber. A subscriber that
// is too far behind is cut off rather than waited for.
func (h *Hub) Publish(e Event) Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	e.ID = h.next
	h.next++
	h.ring[(e.ID-1)%int64(len(h.ring))] = e
	h.sendLocked(e)
	return e
}

// fanOut hands e, unlogged and without an ID, to the current subscribers. A subscriber
// that is behind misses it rather than being cut off: nothing it could resume would bring
// it back.
func (h *Hub) fanOut(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.c <- e:
		default:
		}
	}
}

// sendLocked hands e to every subscriber; one that is too far behind is cut off.
func (h *Hub) sendLocked(e Event) {
	for s := range h.subs {
		select {
		case s.c <- e:
		default:
			s.lagged = true
			delete(h.subs, s)
			close(s.c)
		}
	}
}

// Subscription is one subscriber: Backlog holds the logged events after the resume point,
// then C delivers each new one. C is closed when the subscriber is cut off (Lagged) or
// closed.
type Subscription struct {
	Backlog []Event
	// Reset is true when the resume point is older than the log or of another hub.
	Reset bool
	C     <-chan Event

	hub    *Hub
	c      chan Event
	lagged bool
}

// Subscribe starts a subscription after the event with SSE id lastID ("" for live events
// only). The backlog and the live channel are cut at one instant: nothing is missed or
// sent twice between them.
func (h *Hub) Subscribe(lastID string) *Subscription {
	c := make(chan Event, subBuffer)
	s := &Subscription{C: c, hub: h, c: c}
	h.mu.Lock()
	defer h.mu.Unlock()
	if lastID != "" {
		after, ok := h.ParseID(lastID)
		s.Backlog, s.Reset = h.since(after, ok)
	}
	h.subs[s] = struct{}{}
	return s
}

// since returns the logged events after id, or reset when some of them are gone.
func (h *Hub) since(after int64, ok bool) ([]Event, bool) {
	last := h.next - 1
	oldest := max(1, h.next-int64(len(h.ring)))
	if !ok || after > last || after < oldest-1 {
		return nil, true
	}
	out := make([]Event, 0, last-after)
	for id := after + 1; id <= last; id++ {
		out = append(out, h.ring[(id-1)%int64(len(h.ring))])
	}
	return out, false
}

// Lagged tells, once C is closed, whether the hub cut the subscriber off.
func (s *Subscription) Lagged() bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.lagged
}

// Close ends the subscription; C is closed.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if _, ok := s.hub.subs[s]; ok {
		delete(s.hub.subs, s)
		close(s.c)
	}
}

// String is for test failures and logs.
func (e Event) String() string {
	return fmt.Sprintf("%d %s %s/%s", e.ID, e.Kind, e.Namespace, e.SessionKey)
}
