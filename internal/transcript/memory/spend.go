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

package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// spendBook is the indexer's side of judge, then charge: the tokens its embeddings owe per
// namespace until the manager charges them, and the namespaces the manager holds because
// their budget window is spent. A recall's embeddings are judged and charged by the turn that
// asks; only the indexer's are booked here. What is owed lives in memory: a store killed
// between two collections owes the manager at most one interval's tokens.
type spendBook struct {
	mu   sync.Mutex
	boot string
	n    int
	owed map[string]int64
	// tally is the last tally handed out, taken off owed when the manager acknowledges it.
	tally *transcript.IndexSpend
	held  map[string]bool
	// waiting are the sessions of held namespaces whose new chunks wait, caught up when
	// their namespace is released.
	waiting map[string]map[sessionRef]struct{}
}

func newSpendBook() *spendBook {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &spendBook{boot: hex.EncodeToString(b), owed: map[string]int64{}, held: map[string]bool{},
		waiting: map[string]map[sessionRef]struct{}{}}
}

// owe books tokens the indexer's embeddings of ns received.
func (b *spendBook) owe(ns string, tokens int64) {
	if tokens <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.owed[ns] += tokens
}

// hold says whether ns is held, and if it is, remembers r to catch up on its release.
func (b *spendBook) hold(ns string, r sessionRef) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.held[ns] {
		return false
	}
	w := b.waiting[ns]
	if w == nil {
		w = map[sessionRef]struct{}{}
		b.waiting[ns] = w
	}
	w[r] = struct{}{}
	return true
}

// IndexSpend implements transcript.IndexSpender: it takes the acknowledged tally off what is
// owed, holds the namespaces the manager names (catching up the sessions of those it no
// longer names) and hands out a new tally.
func (ix *Index) IndexSpend(_ context.Context, a transcript.IndexSpendAck) (transcript.IndexSpend, error) {
	b := ix.spend
	namespaces := ix.namespaces()
	b.mu.Lock()
	if b.tally != nil && a.Tally == b.tally.ID {
		for ns, t := range b.tally.Owed {
			if b.owed[ns] -= t; b.owed[ns] <= 0 {
				delete(b.owed, ns)
			}
		}
		b.tally = nil
	}
	held := map[string]bool{}
	for _, ns := range a.Held {
		held[ns] = true
	}
	var release []sessionRef
	for ns, w := range b.waiting {
		if !held[ns] {
			release = slices.AppendSeq(release, maps.Keys(w))
			delete(b.waiting, ns)
		}
	}
	b.held = held
	b.n++
	b.tally = &transcript.IndexSpend{ID: fmt.Sprintf("%s-%d", b.boot, b.n), Owed: maps.Clone(b.owed), Namespaces: namespaces}
	out := *b.tally
	b.mu.Unlock()
	for _, r := range release {
		ix.feed.MarkDirty(r)
	}
	ix.m.held.Set(float64(len(held)))
	return out, nil
}

// namespaces are the namespaces whose Agents have registered memory, sorted.
func (ix *Index) namespaces() []string {
	ix.mu.RLock()
	seen := map[string]bool{}
	for k := range ix.agents {
		seen[k.ns] = true
	}
	ix.mu.RUnlock()
	return slices.Sorted(maps.Keys(seen))
}
