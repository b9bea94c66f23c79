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

package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

func query(t *testing.T, r *store.RetiredStore, ns string, q transcript.RetiredQuery) []string {
	t.Helper()
	recs, err := r.RetiredSessions(context.Background(), ns, q)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, rec := range recs {
		ids = append(ids, rec.SessionID)
	}
	return ids
}

// Records are read from the log on demand: found by sessionId, key or object name, searched
// by key, label or display name ignoring case, and paged in sessions_list's order (the most
// recently updated first, then by sessionId) with a cursor, a replaced record read as it
// was last written.
func TestRetiredSessionsReadOnDemand(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	r, err := store.OpenRetiredStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	recs := []transcript.RetiredSession{
		{SessionID: "s1", Key: "agent:a:one", Label: "Llama research", UpdatedAt: t0.Add(3 * time.Hour)},
		{SessionID: "s2", Key: "agent:a:two", DisplayName: "Alpaca <notes>", UpdatedAt: t0.Add(time.Hour)},
		{SessionID: "s3", Key: "agent:b:three", Label: "Ke\u212Avin", CreatedAt: t0.Add(2 * time.Hour)},
		{SessionID: "s4", Key: "agent:b:four", Label: "s1", UpdatedAt: t0.Add(time.Hour)},
		{SessionID: "s5", Key: "agent:b:five", Label: "\u0130stanbul", UpdatedAt: t0},
	}
	for i, rec := range recs {
		rec.Namespace, rec.Name, rec.AgentID = "ns", "obj-"+rec.SessionID, "a"
		rec.RetiredAt = t0.Add(time.Duration(10-i) * time.Hour)
		if err := r.Retire(ctx, rec); err != nil {
			t.Fatal(err)
		}
		recs[i] = rec
	}
	replaced := recs[1]
	replaced.Label = "replaced"
	if err := r.Retire(ctx, replaced); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		q    transcript.RetiredQuery
		want []string
	}{
		"all, the latest retired first":           {want: []string{"s1", "s2", "s3", "s4", "s5"}},
		"by sessionId (and a label that is one)":  {q: transcript.RetiredQuery{Ref: "s1"}, want: []string{"s1"}},
		"by key":                                  {q: transcript.RetiredQuery{Ref: "agent:b:three"}, want: []string{"s3"}},
		"by object name":                          {q: transcript.RetiredQuery{Ref: "obj-s4"}, want: []string{"s4"}},
		"no such ref":                             {q: transcript.RetiredQuery{Ref: "agent:a"}, want: []string{}},
		"search on a label, any case":             {q: transcript.RetiredQuery{Search: "LLAMA"}, want: []string{"s1"}},
		"search on a display name with <":         {q: transcript.RetiredQuery{Search: "paca <no"}, want: []string{"s2"}},
		"search on a key":                         {q: transcript.RetiredQuery{Search: "b:F"}, want: []string{"s4", "s5"}},
		"search on the replaced label":            {q: transcript.RetiredQuery{Search: "replaced"}, want: []string{"s2"}},
		"search on the label it replaced":         {q: transcript.RetiredQuery{Search: "alpaca <notes>"}, want: []string{"s2"}},
		"search: the Kelvin sign lower-cased":     {q: transcript.RetiredQuery{Search: "kekvin"}, want: []string{"s3"}},
		"search: the dotted I lower-cased":        {q: transcript.RetiredQuery{Search: "istan"}, want: []string{"s5"}},
		"search and ref":                          {q: transcript.RetiredQuery{Ref: "s4", Search: "agent:b"}, want: []string{"s4"}},
		"no match":                                {q: transcript.RetiredQuery{Search: "vicuna"}, want: []string{}},
		"a page, the most recently updated first": {q: transcript.RetiredQuery{Limit: 3}, want: []string{"s1", "s3", "s2"}},
		"the next page, across a tie":             {q: transcript.RetiredQuery{Limit: 3, After: cursorOf(t, r, "s3")}, want: []string{"s2", "s4", "s5"}},
		"the page after a tie's first":            {q: transcript.RetiredQuery{Limit: 1, After: cursorOf(t, r, "s2")}, want: []string{"s4"}},
		"a searched page":                         {q: transcript.RetiredQuery{Limit: 1, Search: "agent:b"}, want: []string{"s3"}},
		"the searched page after it":              {q: transcript.RetiredQuery{Limit: 5, Search: "agent:b", After: cursorOf(t, r, "s3")}, want: []string{"s4", "s5"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, query(t, r, "ns", tc.q)); diff != "" {
				t.Errorf("sessionIds (-want +got):\n%s", diff)
			}
		})
	}
	got, err := r.RetiredSessions(ctx, "ns", transcript.RetiredQuery{Ref: "s2"})
	if err != nil || len(got) != 1 {
		t.Fatalf("s2: %v, %v", got, err)
	}
	if diff := cmp.Diff(replaced, got[0]); diff != "" {
		t.Errorf("the replaced record as read (-want +got):\n%s", diff)
	}
	if got := query(t, r, "elsewhere", transcript.RetiredQuery{}); len(got) != 0 {
		t.Errorf("a namespace with no log: %v", got)
	}
	if _, err := r.RetiredSessions(ctx, "ns", transcript.RetiredQuery{Limit: 1, After: "x"}); err == nil {
		t.Error("a cursor that is none: no error")
	}
}

func cursorOf(t *testing.T, r *store.RetiredStore, id string) string {
	t.Helper()
	recs, err := r.RetiredSessions(context.Background(), "ns", transcript.RetiredQuery{Ref: id})
	if err != nil || len(recs) != 1 {
		t.Fatalf("record %s: %v, %v", id, recs, err)
	}
	return recs[0].Cursor()
}

// The byte test that spares a search from decoding every line never drops a record the
// search keeps: every letter outside ASCII whose lower case holds an ASCII letter is found
// by a search for that letter.
func TestRetiredSearchFindsEveryFold(t *testing.T) {
	ctx := context.Background()
	r, err := store.OpenRetiredStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for c := rune(0x80); c <= utf8.MaxRune; c++ {
		lower := strings.ToLower(string(c))
		i := strings.IndexFunc(lower, func(l rune) bool { return l < utf8.RuneSelf && ('a' <= l && l <= 'z') })
		if !utf8.ValidRune(c) || i < 0 {
			continue
		}
		id := fmt.Sprintf("u%x", c)
		if err := r.Retire(ctx, transcript.RetiredSession{Namespace: "ns", Name: id, SessionID: id, Key: "agent:x:" + id, AgentID: "x",
			Label: string(c)}); err != nil {
			t.Fatal(err)
		}
		if got := query(t, r, "ns", transcript.RetiredQuery{Search: lower[i : i+1]}); !contains(got, id) {
			t.Errorf("search %q does not find the label %q (U+%04X): %v", lower[i:i+1], string(c), c, got)
		}
		want = append(want, id)
	}
	if len(want) == 0 {
		t.Fatal("no letter outside ASCII lower-cases to an ASCII one: the test checks nothing")
	}
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Readers run while writers replace and drop records and compaction rewrites the log under
// them: every read answers whole records at the offsets its index had, none missing.
func TestRetiredReadsDuringCompaction(t *testing.T) {
	ctx := context.Background()
	dir, _ := fastDir(t)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	r, err := store.OpenRetiredStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	const kept = 50
	for i := range kept {
		if err := r.Retire(ctx, fullRecord("ns", i, t0)); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for _, q := range []transcript.RetiredQuery{{}, {Limit: 7}, {Search: "research TASK"}, {Ref: fullRecord("ns", 3, t0).Key}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				recs, err := r.RetiredSessions(ctx, "ns", q)
				if err == nil && q.Limit == 0 && q.Ref == "" && len(recs) < kept {
					err = fmt.Errorf("%d records, want at least the %d kept", len(recs), kept)
				}
				if err != nil {
					errs <- fmt.Errorf("query %+v: %w", q, err)
					return
				}
			}
		}()
	}
	// Churn: records come and go, and the kept ones are replaced; each drop adds a dead line,
	// so the log is compacted many times over.
	for i := range 300 {
		churn := fullRecord("ns", kept+i%10, t0)
		if err := r.Retire(ctx, churn); err != nil {
			t.Fatal(err)
		}
		if err := r.Retire(ctx, fullRecord("ns", i%kept, t0)); err != nil {
			t.Fatal(err)
		}
		if err := r.Unretire(ctx, "ns", churn.SessionID); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	lines, err := os.ReadFile(filepath.Join(dir, "ns.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(lines), "\n"); n > 2*kept+64 {
		t.Errorf("the log has %d lines for %d records: never compacted", n, kept)
	}
	re, err := store.OpenRetiredStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := query(t, re, "ns", transcript.RetiredQuery{}); len(got) != kept {
		t.Errorf("%d records after reopen, want %d", len(got), kept)
	}
}

// A reopened store cuts a torn last line and a compaction's leftover temporary file, and
// its next record starts a whole line that the next reopen reads.
func TestRetiredReopenAfterATornLine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	r, err := store.OpenRetiredStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Retire(ctx, retiredRec("ns", "s1", t0, t0)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "ns.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"op":"retire","session":{"namespace":"ns","name":"n-s9","sessionId":"s9"`)
	_ = f.Close()
	if err := os.WriteFile(filepath.Join(dir, ".tmp-123"), []byte("half a compaction"), 0o600); err != nil {
		t.Fatal(err)
	}
	re, err := store.OpenRetiredStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tmp-123")); !os.IsNotExist(err) {
		t.Errorf("the leftover temporary file: %v, want it removed", err)
	}
	if err := re.Retire(ctx, retiredRec("ns", "s2", t0, t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*store.RetiredStore{re, reopen(t, dir)} {
		if diff := cmp.Diff([]string{"s2", "s1"}, query(t, st, "ns", transcript.RetiredQuery{})); diff != "" {
			t.Errorf("records (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"s2"}, query(t, st, "ns", transcript.RetiredQuery{Ref: "s2"})); diff != "" {
			t.Errorf("the record after the torn line (-want +got):\n%s", diff)
		}
	}
}

func reopen(t *testing.T, dir string) *store.RetiredStore {
	t.Helper()
	r, err := store.OpenRetiredStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
