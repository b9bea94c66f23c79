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

package store

import "context"

// Event is one durable record as its JSON line, shared by every follower (encoded once).
type Event struct {
	Seq  int64
	Tool bool
	Data []byte
}

// Subscription receives the records appended to one session, one slice per group commit.
// C is closed when the subscriber falls too far behind (Lagged), the session is archived, or
// the store closes.
type Subscription struct {
	C <-chan []Event

	c      chan []Event
	s      *session
	lagged bool
}

const subscriptionBuffer = 64

// Subscribe starts following a session. lastSeq is the last durable seq at the moment of
// subscribing: records up to it are history, records after it arrive on C, none twice.
func (st *FileStore) Subscribe(ctx context.Context, namespace, sessionID string) (*Subscription, int64, error) {
	s, err := st.session(namespace, sessionID)
	if err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	if s.broken == errEvicted { // forgotten since: load it again
		s.mu.Unlock()
		return st.Subscribe(ctx, namespace, sessionID)
	}
	defer s.mu.Unlock()
	if s.archived || s.broken != nil {
		return nil, 0, s.notFound()
	}
	c := make(chan []Event, subscriptionBuffer)
	sub := &Subscription{C: c, c: c, s: s}
	s.subs[sub] = struct{}{}
	st.opts.metrics.SSESubscribers.Inc()
	var last int64
	if n := len(s.entries); n > 0 {
		last = s.entries[n-1].Seq
	}
	return sub, last, nil
}

// Lagged reports whether C was closed because the subscriber did not keep up.
func (sub *Subscription) Lagged() bool {
	sub.s.mu.Lock()
	defer sub.s.mu.Unlock()
	return sub.lagged
}

// Close stops the subscription.
func (sub *Subscription) Close() {
	sub.s.mu.Lock()
	defer sub.s.mu.Unlock()
	sub.s.removeSubLocked(sub)
}

func (s *session) removeSubLocked(sub *Subscription) {
	if _, ok := s.subs[sub]; !ok {
		return
	}
	delete(s.subs, sub)
	close(sub.c)
	s.st.opts.metrics.SSESubscribers.Dec()
}

// publishLocked hands a committed batch to every follower without blocking the writer: a
// follower whose buffer is full is dropped (it reconnects with a cursor).
func (s *session) publishLocked(events []Event) {
	for sub := range s.subs {
		select {
		case sub.c <- events:
		default:
			sub.lagged = true
			s.removeSubLocked(sub)
		}
	}
}

func (s *session) closeSubsLocked() {
	for sub := range s.subs {
		s.removeSubLocked(sub)
	}
}
