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

import "errors"

// DefaultMaxLoadedSessions bounds the sessions whose state (offset index, idempotency keys,
// counters) the store keeps in memory: a session loaded once stayed loaded for as long as it
// lived, so at 100,000 sessions that had a turn the indexes alone outgrew the
// transcript-store's limit. Beyond the bound the least recently used idle session is
// forgotten and loaded again from its file on its next use.
const DefaultMaxLoadedSessions = 1024

// WithMaxLoadedSessions bounds the sessions kept loaded (DefaultMaxLoadedSessions).
func WithMaxLoadedSessions(n int) Option { return func(o *options) { o.maxLoaded = n } }

// errEvicted marks the state of a session the store forgot: whoever holds it loads the
// session again.
var errEvicted = errors.New("transcript store: session state evicted")

// evictTries bounds the busy sessions one eviction steps over from the least recently used
// end, so a store full of busy sessions costs a new load little.
const evictTries = 8

// touchLocked marks s as just used, adding it to the loaded sessions if it is new. st.mu held.
func (st *FileStore) touchLocked(s *session) {
	if s.elem != nil {
		st.loaded.MoveToFront(s.elem)
		return
	}
	s.elem = st.loaded.PushFront(s)
	for e, tries := st.loaded.Back(), 0; e != nil && st.loaded.Len() > st.opts.maxLoaded && tries < evictTries; tries++ {
		prev := e.Prev()
		if c := e.Value.(*session); c != s && c.tryEvict() {
			st.forgetLocked(c)
		}
		e = prev
	}
}

// forgetLocked drops s from the loaded sessions; the next use of its session loads it again.
// st.mu held.
func (st *FileStore) forgetLocked(s *session) {
	if k := s.header.Namespace + "/" + s.header.SessionID; st.sessions[k] == s {
		delete(st.sessions, k)
	}
	if s.elem != nil {
		st.loaded.Remove(s.elem)
		s.elem = nil
	}
}

// tryEvict marks s evicted if it is idle: loaded, with no followers, no records waiting to
// be written and no write under way. It never waits for a lock (the caller holds st.mu,
// which the session's holders take after theirs).
func (s *session) tryEvict() bool {
	if !s.flushMu.TryLock() {
		return false
	}
	defer s.flushMu.Unlock()
	if !s.mu.TryLock() {
		return false
	}
	defer s.mu.Unlock()
	if !s.ready || s.broken != nil || s.archived || len(s.subs) > 0 || len(s.pending) > 0 || len(s.inflight) > 0 {
		return false
	}
	s.broken = errEvicted
	return true
}
