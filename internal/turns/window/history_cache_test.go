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
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// readLog is a store that records the reads it serves and can fail the next one.
type readLog struct {
	transcript.Store
	reads   []transcript.ReadOptions
	failOne bool
}

func (s *readLog) Read(ctx context.Context, ns, id string, o transcript.ReadOptions) (transcript.Page, error) {
	s.reads = append(s.reads, o)
	if s.failOne {
		s.failOne = false
		return transcript.Page{}, errors.New("store down")
	}
	return s.Store.Read(ctx, ns, id, o)
}

func newHistoryStore(t *testing.T, sessions ...string) *readLog {
	t.Helper()
	st := &readLog{Store: transcripttest.NewMemoryStore()}
	for _, id := range sessions {
		if _, err := st.CreateSession(context.Background(), transcript.SessionHeader{Namespace: "ns", SessionID: id, SessionKey: "agent:a:" + id}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func appendText(t *testing.T, st transcript.Store, id string, n int, size int) {
	t.Helper()
	for range n {
		m := transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: "text", Text: strings.Repeat("x", size)}}}
		if _, err := st.Append(context.Background(), "ns", id, transcript.AppendRequest{Message: m}); err != nil {
			t.Fatal(err)
		}
	}
}

func recentSeqs(t *testing.T, c *historyCache, st transcript.Store, id string, limit int) []int64 {
	t.Helper()
	recs, err := c.recent(context.Background(), st, "ns", id, limit)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(recs))
	for i := range recs {
		out[i] = recs[i].Seq
	}
	return out
}

func TestHistoryCacheReadsOnlyWhatIsNew(t *testing.T) {
	st := newHistoryStore(t, "s1")
	c := newHistoryCache(1 << 20)
	appendText(t, st, "s1", 3, 10)
	if got := recentSeqs(t, c, st, "s1", 5); !cmp.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("first read = %v", got)
	}
	appendText(t, st, "s1", 4, 10)
	if got := recentSeqs(t, c, st, "s1", 5); !cmp.Equal(got, []int64{3, 4, 5, 6, 7}) {
		t.Errorf("window after 4 more = %v, want 3..7", got)
	}
	if got := recentSeqs(t, c, st, "s1", 5); !cmp.Equal(got, []int64{3, 4, 5, 6, 7}) {
		t.Errorf("read with nothing new = %v, want 3..7", got)
	}
	// More than the window since the last read: the page alone is the history.
	appendText(t, st, "s1", 9, 10)
	if got := recentSeqs(t, c, st, "s1", 5); !cmp.Equal(got, []int64{12, 13, 14, 15, 16}) {
		t.Errorf("window after a gap = %v, want 12..16", got)
	}
	want := []int64{0, 3, 7, 7}
	for i, o := range st.reads {
		if o.AfterSeq != want[i] || o.Limit != 5 || !o.IncludeTools {
			t.Errorf("read %d = %+v, want AfterSeq %d, limit 5, tools", i, o, want[i])
		}
	}
}

func TestHistoryCacheEvictsLeastRecentlyUsed(t *testing.T) {
	st := newHistoryStore(t, "a", "b", "c")
	for _, id := range []string{"a", "b", "c"} {
		appendText(t, st, id, 2, 100)
	}
	// Room for two of the three histories (2 records of about 356 bytes each, and their
	// model view).
	c := newHistoryCache(2 * 2 * (recordOverhead + viewOverhead + 150))
	recentSeqs(t, c, st, "a", 10)
	recentSeqs(t, c, st, "b", 10)
	recentSeqs(t, c, st, "a", 10) // a is now the most recent
	recentSeqs(t, c, st, "c", 10) // evicts b
	st.reads = nil
	recentSeqs(t, c, st, "a", 10)
	recentSeqs(t, c, st, "b", 10)
	if st.reads[0].AfterSeq != 2 || st.reads[1].AfterSeq != 0 {
		t.Errorf("reads after eviction = %+v, want a cached (after 2) and b read whole", st.reads)
	}

	// A history larger than the whole budget is never kept.
	big := newHistoryStore(t, "big")
	appendText(t, big, "big", 1, 4096)
	small := newHistoryCache(1024)
	recentSeqs(t, small, big, "big", 10)
	recentSeqs(t, small, big, "big", 10)
	if big.reads[1].AfterSeq != 0 || small.size != 0 {
		t.Errorf("oversized history cached: reads %+v, size %d", big.reads, small.size)
	}
}

func TestHistoryCacheForgetsASessionOnError(t *testing.T) {
	st := newHistoryStore(t, "s1")
	c := newHistoryCache(1 << 20)
	appendText(t, st, "s1", 3, 10)
	recentSeqs(t, c, st, "s1", 10)
	st.failOne = true
	if _, err := c.recent(context.Background(), st, "ns", "s1", 10); err == nil {
		t.Fatal("read through a failing store succeeded")
	}
	recentSeqs(t, c, st, "s1", 10)
	if last := st.reads[len(st.reads)-1]; last.AfterSeq != 0 {
		t.Errorf("read after an error = %+v, want a whole read", last)
	}
}

// The cache must return exactly what a whole read returns, whatever the interleaving of
// appends, reads, window sizes and evictions.
func TestHistoryCacheMatchesWholeReads(t *testing.T) {
	ids := []string{"s0", "s1", "s2", "s3"}
	st := newHistoryStore(t, ids...)
	c := newHistoryCache(6 * (recordOverhead + 40))
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for step := range 2000 {
		id := ids[rng.IntN(len(ids))]
		if rng.IntN(2) == 0 {
			appendText(t, st, id, 1+rng.IntN(4), rng.IntN(40))
			continue
		}
		limit := 1 + rng.IntN(8)
		got, err := c.recent(ctx, st, "ns", id, limit)
		if err != nil {
			t.Fatal(err)
		}
		page, err := st.Store.Read(ctx, "ns", id, transcript.ReadOptions{Limit: limit, IncludeTools: true})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(page.Messages, got); diff != "" {
			t.Fatalf("step %d, %s limit %s (-whole +cached):\n%s", step, id, strconv.Itoa(limit), diff)
		}
	}
}

// The engine's own appends (two a turn) land in the entry's room for them: a turn does not
// copy its session's window of records.
func TestHistoryCacheExtendsInPlace(t *testing.T) {
	st := newHistoryStore(t, "s1")
	c := newHistoryCache(DefaultHistoryCacheBytes)
	appendText(t, st, "s1", historyMessages, 10)
	recentSeqs(t, c, st, "s1", historyMessages)
	next := int64(historyMessages + 1)
	one := make([]transcript.Record, 1)
	allocs := testing.AllocsPerRun(200, func() {
		one[0] = transcript.Record{Seq: next, Message: transcript.Message{Role: transcript.RoleUser}}
		if !c.extend(historyKey("ns", "s1"), one) {
			t.Fatalf("record %d did not extend the entry", next)
		}
		next++
	})
	// One copy of the window every historyMessages/slackDiv appends, none in between.
	if allocs >= 1 {
		t.Errorf("extend allocates %.2f times an append, want less than once", allocs)
	}
	recs, view, ok := c.peek(historyKey("ns", "s1"), historyMessages)
	checkView(t, recs, view)
	if !ok || len(recs) != historyMessages || recs[len(recs)-1].Seq != next-1 || recs[0].Seq != next-historyMessages {
		t.Errorf("window after the appends: %d records, ok %v", len(recs), ok)
	}
}

// Appends in place never show through the slices readers hold, nor do readers' appends
// reach the cache.
func TestHistoryCacheReadersKeepTheirView(t *testing.T) {
	st := newHistoryStore(t, "s1")
	c := newHistoryCache(DefaultHistoryCacheBytes)
	appendText(t, st, "s1", 8, 10)
	key := historyKey("ns", "s1")
	recentSeqs(t, c, st, "s1", 8)
	type view struct {
		recs []transcript.Record
		seqs []int64
	}
	var views []view
	seqs := func(recs []transcript.Record) []int64 {
		out := make([]int64, len(recs))
		for i := range recs {
			out[i] = recs[i].Seq
		}
		return out
	}
	for next := int64(9); next < 60; next++ {
		recs, msgs, ok := c.peek(key, 8)
		if !ok {
			t.Fatalf("seq %d: nothing cached", next)
		}
		checkView(t, recs, msgs)
		views = append(views, view{recs, seqs(recs)})
		// A reader that appends to its slice writes into an array of its own.
		_ = append(recs, transcript.Record{Seq: -1})
		if !c.extend(key, []transcript.Record{{Seq: next}}) {
			t.Fatalf("seq %d did not extend", next)
		}
	}
	for i, v := range views {
		if d := cmp.Diff(v.seqs, seqs(v.recs)); d != "" {
			t.Errorf("view %d changed under its reader (-then +now):\n%s", i, d)
		}
	}
	if got, _, _ := c.peek(key, 8); !cmp.Equal(seqs(got), []int64{52, 53, 54, 55, 56, 57, 58, 59}) {
		t.Errorf("cached window = %v, want 52..59", seqs(got))
	}
}

func TestHistoryCacheExtend(t *testing.T) {
	st := newHistoryStore(t, "s")
	appendText(t, st, "s", 3, 1)
	c := newHistoryCache(DefaultHistoryCacheBytes)
	if c.extend(historyKey("ns", "s"), []transcript.Record{{Seq: 4}}) {
		t.Error("extend of a transcript not cached = true")
	}
	recentSeqs(t, c, st, "s", 3) // caches seqs 1..3 with a window of 3
	key := historyKey("ns", "s")
	if c.extend(key, []transcript.Record{{Seq: 5}}) {
		t.Error("extend past a gap (4 missing) = true")
	}
	if c.extend(key, []transcript.Record{{Seq: 2}}) {
		t.Error("extend with a record already cached = true")
	}
	if !c.extend(key, []transcript.Record{{Seq: 4}, {Seq: 5}}) {
		t.Fatal("extend right after the last cached record = false")
	}
	recs, view, ok := c.peek(key, 3)
	checkView(t, recs, view)
	if !ok {
		t.Fatal("peek after extend found nothing")
	}
	var seqs []int64
	for _, r := range recs {
		seqs = append(seqs, r.Seq)
	}
	if diff := cmp.Diff([]int64{3, 4, 5}, seqs); diff != "" {
		t.Errorf("cached window after extend (-want +got):\n%s", diff)
	}
	if _, _, ok := c.peek(key, 4); ok {
		t.Error("peek of more than the cached window = true")
	}
}

// checkView says the cache's model view of recs is what converting them gives.
func checkView(t *testing.T, recs []transcript.Record, view []provider.Message) {
	t.Helper()
	want := make([]provider.Message, len(recs))
	for i := range recs {
		want[i] = shownMessage(&recs[i])
	}
	if d := cmp.Diff(want, view); d != "" {
		t.Fatalf("cached model view (-converted +cached):\n%s", d)
	}
}
