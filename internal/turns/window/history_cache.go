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
	"container/list"
	"context"
	"sync"
	"unsafe"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// DefaultHistoryCacheBytes bounds the recent history the engine keeps between turns: the
// 200-record windows of about a hundred busy sessions (each with its room for appends).
const DefaultHistoryCacheBytes = 8 << 20

// historyCache keeps the recent records of the sessions that ran turns lately, so a turn asks
// the store only for what was appended since its session's last read instead of decoding the
// whole window again (most of a busy manager's CPU). The store stays the source of truth:
// records never change once written, so a cached prefix plus the records after it is exactly
// what a full read returns, and the engine's own appends extend an entry only when they follow
// it with no gap (extend), which lets a turn skip the read when its input lands right after
// the cached records (history.go). Least recently used sessions are dropped beyond a
// byte budget.
//
// An entry's records live in an array with room for window/slackDiv more: the engine's
// appends (two per turn) land in that room instead of copying the window, and the window is
// copied to a new array only when the room is used up. Readers get slices capped at the
// length they were given, so an append in place never shows through them.
type historyCache struct {
	max int

	mu    sync.Mutex
	size  int
	lru   *list.List // of *historyEntry, most recent first
	byKey map[string]*list.Element
}

// slackDiv sizes an entry's room for appends: window/slackDiv records (at least one).
const slackDiv = 4

type historyEntry struct {
	key string
	// buf[lo:] are the last window records of the transcript (all when fewer); buf[:lo]
	// are older ones still in the array until it is next copied.
	buf []transcript.Record
	// view is buf as the model sees it, message i for record i (modelView): every turn
	// of the session sends its history, converted once here.
	view   []provider.Message
	lo     int
	window int
	bytes  int
}

// recs are the entry's records and their model view, capped so that a reader's append
// never writes into the entry's arrays.
func (e *historyEntry) recs() ([]transcript.Record, []provider.Message) {
	return e.buf[e.lo:len(e.buf):len(e.buf)], e.view[e.lo:len(e.view):len(e.view)]
}

// modelView is recs as the model sees them, one message a record (the zero message for a
// record the model never sees), with room for capacity.
func modelView(recs []transcript.Record, capacity int) []provider.Message {
	out := make([]provider.Message, len(recs), max(capacity, len(recs)))
	for i := range recs {
		out[i] = shownMessage(&recs[i])
	}
	return out
}

// shownMessage is the model's message for r, or the zero message when the model never sees it.
func shownMessage(r *transcript.Record) provider.Message {
	if m, ok := ToProvider(&r.Message); ok {
		return m
	}
	return provider.Message{}
}

func newHistoryCache(maxBytes int) *historyCache {
	return &historyCache{max: maxBytes, lru: list.New(), byKey: map[string]*list.Element{}}
}

// recent returns the last limit records of a transcript, reading from store only those after
// the cached ones. The records are shared with the cache: read them, never modify them.
func (c *historyCache) recent(ctx context.Context, store transcript.Store, namespace, sessionID string, limit int) ([]transcript.Record, error) {
	key := historyKey(namespace, sessionID)
	cached, _, window := c.get(key)
	if window < limit {
		// The entry may lack records older than it holds that this window needs.
		cached, window = nil, limit
	}
	var after int64
	if n := len(cached); n > 0 {
		after = cached[n-1].Seq
	}
	page, err := store.Read(ctx, namespace, sessionID, transcript.ReadOptions{Limit: window, AfterSeq: after, IncludeTools: true})
	if err != nil {
		// A session the store no longer has may come back with seqs from 1 again.
		c.drop(key)
		return nil, err
	}
	recs := page.Messages
	if after > 0 && !page.HasMore {
		recs = joinWindow(cached, recs, window)
	}
	recs = recs[:len(recs):len(recs)]
	c.put(key, recs, window)
	return recs[max(0, len(recs)-limit):], nil
}

// joinWindow is the last window records of cached followed by recs, in a new slice (readers
// share cached) with room for window/slackDiv more.
func joinWindow(cached, recs []transcript.Record, window int) []transcript.Record {
	keep := max(0, len(cached)+len(recs)-window)
	out := make([]transcript.Record, 0, len(cached)-keep+len(recs)+max(1, window/slackDiv))
	return append(append(out, cached[keep:]...), recs...)
}

// historyKey is a transcript's key in the cache.
func historyKey(namespace, sessionID string) string { return namespace + "/" + sessionID }

// peek returns the last limit cached records of a transcript without asking the store, and
// false when the cache cannot answer for that many. They are exact only up to the store's
// newest record when nothing was appended since: the caller proves that (extend).
func (c *historyCache) peek(key string, limit int) ([]transcript.Record, []provider.Message, bool) {
	recs, view, window := c.get(key)
	if len(recs) == 0 || window < limit {
		return nil, nil, false
	}
	from := max(0, len(recs)-limit)
	return recs[from:], view[from:], true
}

// extend appends records the engine just appended to a cached transcript when they follow
// its last cached record with no gap, and says whether they did. Records that do not (the
// cache is behind another writer's appends, or the store returned records it already had)
// leave the entry as it is: the next read brings it up to date.
func (c *historyCache) extend(key string, recs []transcript.Record) bool {
	if len(recs) == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return false
	}
	e := el.Value.(*historyEntry)
	next := e.buf[len(e.buf)-1].Seq + 1
	for i := range recs {
		if recs[i].Seq != next+int64(i) {
			return false
		}
	}
	c.size -= e.bytes
	if len(e.buf)+len(recs) <= cap(e.buf) {
		// In place: no reader's slice reaches past len(e.buf).
		// Their slots were counted at recordOverhead while free.
		e.buf = append(e.buf, recs...)
		for i := range recs {
			e.view = append(e.view, shownMessage(&recs[i]))
		}
		e.lo = max(0, len(e.buf)-e.window)
		e.bytes += recordsBytes(recs) - len(recs)*recordOverhead
	} else {
		e.buf, e.lo = joinWindow(e.buf[e.lo:], recs, e.window), 0
		e.view = modelView(e.buf, cap(e.buf))
		e.bytes = entryBytes(e.buf)
	}
	c.size += e.bytes
	c.lru.MoveToFront(el)
	c.evictLocked()
	return true
}

// get returns a session's cached records, the last window of its transcript (all of it when
// shorter).
func (c *historyCache) get(key string) ([]transcript.Record, []provider.Message, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, nil, 0
	}
	c.lru.MoveToFront(el)
	e := el.Value.(*historyEntry)
	recs, view := e.recs()
	return recs, view, e.window
}

// put stores recs (which the cache then owns) and evicts beyond the budget; a history
// larger than the whole budget is not kept.
func (c *historyCache) put(key string, recs []transcript.Record, window int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(key)
	b := entryBytes(recs)
	if b > c.max || len(recs) == 0 {
		return
	}
	c.byKey[key] = c.lru.PushFront(&historyEntry{key: key, buf: recs, view: modelView(recs, cap(recs)), window: window, bytes: b})
	c.size += b
	c.evictLocked()
}

// evictLocked drops the least recently used entries until the cache fits its budget.
func (c *historyCache) evictLocked() {
	for c.size > c.max {
		c.removeLocked(c.lru.Back().Value.(*historyEntry).key)
	}
}

func (c *historyCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(key)
}

func (c *historyCache) removeLocked(key string) {
	if el, ok := c.byKey[key]; ok {
		c.size -= el.Value.(*historyEntry).bytes
		c.lru.Remove(el)
		delete(c.byKey, key)
	}
}

// recordOverhead estimates a record's memory beyond its variable-length strings.
const recordOverhead = 256

// entryBytes is what an entry's arrays hold: its records, its free room at recordOverhead
// a record, and its model view (which shares the records' strings) at viewOverhead a slot.
func entryBytes(buf []transcript.Record) int {
	return recordsBytes(buf) + (cap(buf)-len(buf))*recordOverhead + cap(buf)*viewOverhead
}

// viewOverhead is a model message's size beyond the strings it shares with its record.
const viewOverhead = int(unsafe.Sizeof(provider.Message{}))

func recordsBytes(recs []transcript.Record) int {
	n := 0
	for i := range recs {
		r := &recs[i]
		n += recordOverhead + len(r.ID) + len(r.IdempotencyKey) + len(r.Message.ToolCallID) + len(r.Message.ToolName)
		for j := range r.Message.Content {
			b := &r.Message.Content[j]
			n += len(b.Text) + len(b.ID) + len(b.Name) + len(b.Arguments) + len(b.Thinking) + len(b.ThinkingSignature)
		}
	}
	return n
}
