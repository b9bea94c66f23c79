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

package window

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// load gives the window its session's recent history and queues the turn's input. A session
// whose recent records are cached (the lane's earlier turns appended them) is not read: the
// turn's first append says whether anything else was appended since, and Verify reads only
// then. Otherwise the history is read from the store as before.
func (w *Window) load(ctx context.Context) error {
	c := w.src.cache
	if recs, view, ok := c.peek(w.key, historyMessages); ok && !w.hasOwn(recs) {
		w.cachedLast = recs[len(recs)-1].Seq
		w.useHistoryOf(recs, view)
		return nil
	}
	recs, err := c.recent(ctx, w.src.store, w.req.Namespace, w.req.SessionID, historyMessages)
	if err != nil {
		return fmt.Errorf("reading transcript: %w", err)
	}
	w.useHistory(recs)
	return nil
}

// Verify runs after the turn's first append (its Queue). A history taken from the cache
// stands when that append landed right after it; otherwise another writer appended in
// between (or the turn ran before), and the history is read from the store and used
// instead, the turn's own records (its input just appended among them) in Done.
func (w *Window) Verify(ctx context.Context) error {
	if w.cachedLast == 0 || w.contiguous {
		return nil
	}
	// The turn appended its Queue already: what the re-read would queue again is in Done.
	w.cachedLast, w.Queue = 0, nil
	recs, err := w.src.cache.recent(ctx, w.src.store, w.req.Namespace, w.req.SessionID, historyMessages)
	if err != nil {
		return fmt.Errorf("reading transcript: %w", err)
	}
	w.useHistory(recs)
	return nil
}

// Appended keeps the cache in step with the turn's appends (recs as the store returned
// them), and records whether the first of them followed the cached history.
func (w *Window) Appended(recs []transcript.Record) {
	extended := w.src.cache.extend(w.key, recs)
	if !w.appended {
		w.appended = true
		w.contiguous = extended && w.cachedLast > 0 && len(recs) > 0 && recs[0].Seq == w.cachedLast+1
	}
}

// hasOwn says recs hold a record of this turn (it ran before): those cases read the store.
func (w *Window) hasOwn(recs []transcript.Record) bool {
	prefix := w.req.Turn + "/"
	for i := range recs {
		if strings.HasPrefix(recs[i].IdempotencyKey, prefix) {
			return true
		}
	}
	return false
}

// useHistory splits recs into the turn's own records (Done) and the history the model
// sees, queues the system context and the input unless done, and fits the model's view:
// the latest summary and what fits of the messages after it (fit, compaction.go).
func (w *Window) useHistory(recs []transcript.Record) { w.useHistoryOf(recs, nil) }

// useHistoryOf is useHistory given the cache's model view of recs (message i for record
// i), which also says recs hold none of the turn's records (hasOwn said so); nil when recs
// come from the store.
func (w *Window) useHistoryOf(recs []transcript.Record, view []provider.Message) {
	prefix := w.req.Turn + "/"
	own := 0
	for i := 0; view == nil && i < len(recs); i++ {
		if r := &recs[i]; strings.HasPrefix(r.IdempotencyKey, prefix) {
			if w.Done == nil {
				w.Done = map[string]transcript.Record{}
			}
			w.Done[r.IdempotencyKey] = *r
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

	if fork := w.queueFork(history); len(fork) > 0 {
		// A full slice expression: history may share the cache's array, which must not be written.
		history = append(history[:len(history):len(history)], fork...)
		view = nil // no longer record for record
	}
	if !w.req.Compact {
		w.queueSystemContext()
		input := w.queue(w.req.Turn+"/0", w.req.Input)
		w.input, _ = ToProvider(&input)
	}
	var first int64
	if len(recs) > 0 {
		first = recs[0].Seq
	}
	var made *transcript.Record
	if r, ok := w.Done[w.compactionKey()]; ok {
		own := r // declared here, it is allocated only when the turn made one before
		made = &own
	}
	w.view = viewHistory(history, first, made)
	if view != nil { // tail is a suffix of history, so its view is the same suffix of view
		w.view.msgs = view[len(view)-len(w.view.tail):]
	}
	w.fit()
}

// queueSystemContext queues the turn's system context (its role in a send or run) as a
// system record before its input, once: a reader of the transcript sees what the model was
// told. Models never get it back from history (ToProvider skips system records); each turn
// brings its own.
func (w *Window) queueSystemContext() {
	if w.req.SystemContext == "" {
		return
	}
	k := w.req.Turn + "/system"
	if _, ok := w.Done[k]; ok {
		return
	}
	w.Queue = append(w.Queue, transcript.AppendRequest{IdempotencyKey: k, Message: transcript.Message{
		Role: transcript.RoleSystem, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: w.req.SystemContext}},
	}})
}

// queue returns the message already recorded under key k, or queues m for it.
func (w *Window) queue(k string, m transcript.Message) transcript.Message {
	if r, ok := w.Done[k]; ok {
		return r.Message
	}
	w.Queue = append(w.Queue, transcript.AppendRequest{IdempotencyKey: k, Message: m})
	return m
}
