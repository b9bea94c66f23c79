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

package runtime

import (
	"container/list"
	"context"
	"sync"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// DefaultHistoryCacheBytes bounds the recent history the engine keeps between turns.
const DefaultHistoryCacheBytes = 4 << 20

// historyCache keeps the recent records of the sessions that ran turns lately, so a turn asks
// the store only for what was appended since its session's last read instead of decoding the
// whole window again (most of a busy manager's CPU). The store stays the source of truth:
// every turn still reads, and records never change once written, so a cached prefix plus the
// records after it is exactly what a full read returns. Least recently used sessions are
// dropped beyond a byte budget.
type historyCache struct {
	max int

	mu    sync.Mutex
	size  int
	lru   *list.List // of *historyEntry, most recent first
	byKey map[string]*list.Element
}

type historyEntry struct {
	key    string
	recs   []transcript.Record
	window int // recs are the last window records of the transcript (all when fewer)
	bytes  int
}

func newHistoryCache(maxBytes int) *historyCache {
	return &historyCache{max: maxBytes, lru: list.New(), byKey: map[string]*list.Element{}}
}

// recent returns the last limit records of a transcript, reading from store only those after
// the cached ones. The records are shared with the cache: read them, never modify them.
func (c *historyCache) recent(ctx context.Context, store transcript.Store, namespace, sessionID string, limit int) ([]transcript.Record, error) {
	key := namespace + "/" + sessionID
	cached, window := c.get(key)
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
		keep := max(0, len(cached)+len(recs)-window)
		recs = append(append(make([]transcript.Record, 0, len(cached)-keep+len(recs)), cached[keep:]...), recs...)
	}
	c.put(key, recs, window)
	return recs[max(0, len(recs)-limit):], nil
}

// get returns a session's cached records, the last window of its transcript (all of it when
// shorter).
func (c *historyCache) get(key string) ([]transcript.Record, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, 0
	}
	c.lru.MoveToFront(el)
	e := el.Value.(*historyEntry)
	return e.recs, e.window
}

// put stores recs (which the cache then owns) and evicts beyond the budget; a history
// larger than the whole budget is not kept.
func (c *historyCache) put(key string, recs []transcript.Record, window int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(key)
	b := recordsBytes(recs)
	if b > c.max || len(recs) == 0 {
		return
	}
	c.byKey[key] = c.lru.PushFront(&historyEntry{key: key, recs: recs, window: window, bytes: b})
	c.size += b
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

func recordsBytes(recs []transcript.Record) int {
	n := 0
	for i := range recs {
		r := &recs[i]
		n += recordOverhead + len(r.ID) + len(r.IdempotencyKey) + len(r.Message.ToolCallID) + len(r.Message.ToolName)
		for j := range r.Message.Content {
			b := &r.Message.Content[j]
			n += len(b.Text) + len(b.ID) + len(b.Name) + len(b.Arguments)
		}
	}
	return n
}
