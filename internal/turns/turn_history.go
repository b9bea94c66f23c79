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

package turns

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// loadHistory gives the turn its session's recent history and queues its input. A session
// whose recent records are cached (the lane's earlier turns appended them) is not read: the
// turn's first append says whether anything else was appended since, and verifyHistory reads
// only then. Otherwise the history is read from the store as before.
func (t *turn) loadHistory(ctx context.Context) error {
	e, req := t.e, t.req
	if recs, view, ok := e.history.peek(t.cacheKey(), historyMessages); ok && !t.hasOwn(recs) {
		t.cachedLast = recs[len(recs)-1].Seq
		t.useHistoryOf(recs, view)
		return nil
	}
	recs, err := e.history.recent(ctx, e.opts.Store, req.Namespace, t.session.Status.SessionID, historyMessages)
	if err != nil {
		return fmt.Errorf("reading transcript: %w", err)
	}
	t.useHistory(recs)
	return nil
}

// verifyHistory runs after the turn's first append. A history taken from the cache stands
// when that append landed right after it; otherwise another writer appended in between (or
// the turn ran before), and the history is read from the store and used instead, the
// turn's own records (its input just appended among them) as done.
func (t *turn) verifyHistory(ctx context.Context) error {
	if t.cachedLast == 0 || t.contiguous {
		return nil
	}
	t.cachedLast = 0
	recs, err := t.e.history.recent(ctx, t.e.opts.Store, t.req.Namespace, t.session.Status.SessionID, historyMessages)
	if err != nil {
		return fmt.Errorf("reading transcript: %w", err)
	}
	t.useHistory(recs)
	return nil
}

// noteAppended keeps the cache in step with the turn's appends, and records whether the
// first of them followed the cached history.
func (t *turn) noteAppended(recs []transcript.Record) {
	extended := t.e.history.extend(t.cacheKey(), recs)
	if !t.appended {
		t.appended = true
		t.contiguous = extended && t.cachedLast > 0 && len(recs) > 0 && recs[0].Seq == t.cachedLast+1
	}
}

// cacheKey is the turn's session in the history cache.
func (t *turn) cacheKey() string {
	if t.hkey == "" {
		t.hkey = historyKey(t.req.Namespace, t.session.Status.SessionID)
	}
	return t.hkey
}

// hasOwn says recs hold a record of this turn (it ran before): those cases read the store.
func (t *turn) hasOwn(recs []transcript.Record) bool {
	prefix := t.req.ID + "/"
	for i := range recs {
		if strings.HasPrefix(recs[i].IdempotencyKey, prefix) {
			return true
		}
	}
	return false
}

// useHistory splits recs into the turn's own records (done) and the history the model
// sees, queues the system context and the input unless done, and fits the model's view:
// the latest summary and what fits of the messages after it (compaction.go).
func (t *turn) useHistory(recs []transcript.Record) { t.useHistoryOf(recs, nil) }

// useHistoryOf is useHistory given the cache's model view of recs (message i for record
// i), which also says recs hold none of the turn's records (hasOwn said so); nil when recs
// come from the store.
func (t *turn) useHistoryOf(recs []transcript.Record, view []provider.Message) {
	prefix := t.req.ID + "/"
	own := 0
	for i := 0; view == nil && i < len(recs); i++ {
		if r := &recs[i]; strings.HasPrefix(r.IdempotencyKey, prefix) {
			if t.done == nil {
				t.done = map[string]transcript.Record{}
			}
			t.done[r.IdempotencyKey] = *r
			own++
		}
	}
	// recs are shared with the history cache: read, never modified, copied only when the
	// turn ran before.
	history := recs
	if own > 0 {
		history = make([]transcript.Record, 0, len(recs)-own)
		for i := range recs {
			if !strings.HasPrefix(recs[i].IdempotencyKey, prefix) {
				history = append(history, recs[i])
			}
		}
	}

	if fork := t.queueFork(history); len(fork) > 0 {
		// A full slice expression: history may share the cache's array, which must not be written.
		history = append(history[:len(history):len(history)], fork...)
		view = nil // no longer record for record
	}
	if !t.req.Compact {
		t.recordSystemContext()
		input := t.reuse(t.req.Input)
		t.input, _ = toProvider(&input)
	}
	var first int64
	if len(recs) > 0 {
		first = recs[0].Seq
	}
	var made *transcript.Record
	if r, ok := t.done[t.compactionKey()]; ok {
		made = &r
	}
	t.view = viewHistory(history, first, made)
	if view != nil { // tail is a suffix of history, so its view is the same suffix of view
		t.view.msgs = view[len(view)-len(t.view.tail):]
	}
	t.fitView()
}
