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

package search_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/search"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

const ns = transcripttest.Namespace

// indexed is a store and its index, both under dir.
type indexed struct {
	st *store.FileStore
	ix *search.Index
}

func open(t *testing.T, dir string, o search.Options) indexed {
	t.Helper()
	ix, err := search.Open(filepath.Join(dir, "search.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenFileStore(filepath.Join(dir, "transcripts"), ix.StoreOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	ix.Start(st)
	t.Cleanup(func() { _ = ix.Close(); _ = st.Close() })
	return indexed{st: st, ix: ix}
}

func (x indexed) close(t *testing.T) {
	t.Helper()
	if err := x.ix.Close(); err != nil {
		t.Fatal(err)
	}
	_ = x.st.Close()
}

func (x indexed) say(t *testing.T, id string, msgs ...transcript.Message) {
	t.Helper()
	for _, m := range msgs {
		if _, err := x.st.Append(context.Background(), ns, id, transcript.AppendRequest{Message: m}); err != nil {
			t.Fatal(err)
		}
	}
}

// hits searches after the index has caught up, and returns "key#seq excerpt" per hit.
func (x indexed) hits(t *testing.T, q transcript.SearchQuery) ([]string, transcript.SearchResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the 100,000 messages under -race
	defer cancel()
	if err := x.ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	q.Namespace = ns
	res, err := x.ix.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, h := range res.Hits {
		out = append(out, h.SessionKey+"#"+itoa(h.Seq)+" "+h.Excerpt)
	}
	return out, res
}

func itoa(n int64) string { return transcript.FormatCursor(n)[len("seq:"):] }

func user(s string) transcript.Message { return transcripttest.TextMessage(transcript.RoleUser, s) }
func bot(s string) transcript.Message  { return transcripttest.TextMessage(transcript.RoleAssistant, s) }

func seed(t *testing.T, x indexed) {
	transcripttest.CreateSession(t, x.st, "s1", "agent:main:main")
	transcripttest.CreateSession(t, x.st, "s2", "agent:research:main")
	x.say(t, "s1", user("tell me about llamas"), bot("Llamas are camelids from South America"),
		transcript.Message{Role: transcript.RoleSystem, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "llamas system context"}}})
	x.say(t, "s2", user("alpacas and llamas llamas llamas"), bot("my key is sk-abcdefghijklmnopqrstuvwx, llamas"))
}

func TestSearchAsAppended(t *testing.T) {
	x := open(t, t.TempDir(), search.Options{})
	seed(t, x)
	got, _ := x.hits(t, transcript.SearchQuery{Text: "LLAMAS"})
	// BM25: more hits of the word first, then shorter messages.
	want := []string{
		"agent:research:main#1 alpacas and llamas llamas llamas",
		"agent:main:main#1 tell me about llamas",
		"agent:research:main#2 my key is [REDACTED], llamas",
		"agent:main:main#2 Llamas are camelids from South America",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("hits (-want +got):\n%s", d)
	}
	_, res := x.hits(t, transcript.SearchQuery{Text: "sk abcdefghijklmnopqrstuvwx"})
	if len(res.Hits) != 1 || !res.Hits[0].ContentRedacted || res.Hits[0].Cursor != "seq:3" || res.Hits[0].MessageID == "" {
		t.Errorf("hit of the key = %+v, want one redacted hit with cursor seq:3 and a message id", res.Hits)
	}
	got, _ = x.hits(t, transcript.SearchQuery{Text: "llamas camelids"})
	if d := cmp.Diff([]string{"agent:main:main#2 Llamas are camelids from South America"}, got); d != "" {
		t.Errorf("every word must match (-want +got):\n%s", d)
	}
	got, _ = x.hits(t, transcript.SearchQuery{Text: "llamas", SessionIDs: []string{"s1"}})
	if len(got) != 2 {
		t.Errorf("searching only s1 gave %q", got)
	}
	if got, _ := x.hits(t, transcript.SearchQuery{Text: "llamas", SessionIDs: []string{}}); len(got) != 0 {
		t.Errorf("searching no session gave %q", got)
	}
	if got, _ := x.hits(t, transcript.SearchQuery{Text: "system"}); len(got) != 0 {
		t.Errorf("system context is not searched, got %q", got)
	}
}

func TestSearchPages(t *testing.T) {
	x := open(t, t.TempDir(), search.Options{})
	seed(t, x)
	var all []string
	offset := 0
	for range 10 {
		got, res := x.hits(t, transcript.SearchQuery{Text: "llamas", Limit: 1, Offset: offset})
		all = append(all, got...)
		if res.NextOffset == 0 {
			break
		}
		offset = res.NextOffset
	}
	if len(all) != 4 {
		t.Errorf("paging one by one gave %q, want the 4 hits", all)
	}
}

// TestArchivedSessionsLeave: an archived session leaves the results, a restored one returns.
func TestArchivedSessionsLeave(t *testing.T) {
	x := open(t, t.TempDir(), search.Options{})
	seed(t, x)
	if err := x.st.Archive(context.Background(), ns, "s2"); err != nil {
		t.Fatal(err)
	}
	got, _ := x.hits(t, transcript.SearchQuery{Text: "llamas"})
	if len(got) != 2 {
		t.Errorf("after archiving s2: %q, want s1's two hits", got)
	}
	// Restored, its messages are found again.
	if err := x.st.Restore(context.Background(), ns, "s2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := x.hits(t, transcript.SearchQuery{Text: "llamas"}); len(got) != 4 {
		t.Errorf("after restoring s2: %q, want the 4 hits", got)
	}
	// Archived and restored at once: the restore's catch-up comes after the archive's drop.
	if err := x.st.Archive(context.Background(), ns, "s2"); err != nil {
		t.Fatal(err)
	}
	if err := x.st.Restore(context.Background(), ns, "s2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := x.hits(t, transcript.SearchQuery{Text: "llamas"}); len(got) != 4 {
		t.Errorf("after archiving and restoring s2 at once: %q, want the 4 hits", got)
	}
}

// TestRebuiltFromFiles: an index deleted, or behind the files (the store appended while it was
// closed), is caught up from the JSONL files when opened.
func TestRebuiltFromFiles(t *testing.T) {
	dir := t.TempDir()
	x := open(t, dir, search.Options{})
	seed(t, x)
	x.close(t)

	// Appended and archived while the index was not there.
	st, err := store.OpenFileStore(filepath.Join(dir, "transcripts"))
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CreateSession(t, st, "s3", "agent:main:cron:daily")
	if _, err := st.Append(context.Background(), ns, "s3", transcript.AppendRequest{Message: user("llamas at dawn")}); err != nil {
		t.Fatal(err)
	}
	if err := st.Archive(context.Background(), ns, "s2"); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()

	x = open(t, dir, search.Options{})
	got, _ := x.hits(t, transcript.SearchQuery{Text: "llamas"})
	if len(got) != 3 {
		t.Errorf("behind index caught up: %q, want s1's two and s3's one", got)
	}
	x.close(t)

	if err := os.Remove(filepath.Join(dir, "search.db")); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(dir, "search.db-wal"))
	_ = os.Remove(filepath.Join(dir, "search.db-shm"))
	x = open(t, dir, search.Options{})
	got2, _ := x.hits(t, transcript.SearchQuery{Text: "llamas"})
	if d := cmp.Diff(got, got2); d != "" {
		t.Errorf("a deleted index rebuilt gives other hits (-before +after):\n%s", d)
	}
}

// TestQueueOverflowCatchesUp: with a queue of one, commits miss the queue; the sessions are
// read back from their files and nothing is lost or doubled.
func TestQueueOverflowCatchesUp(t *testing.T) {
	x := open(t, t.TempDir(), search.Options{Queue: 1})
	transcripttest.CreateSession(t, x.st, "s1", "agent:main:main")
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 25 {
				_, _ = x.st.Append(context.Background(), ns, "s1", transcript.AppendRequest{Message: user("word " + itoa(int64(g*100+i)))})
			}
		}()
	}
	for range 4 {
		<-done
	}
	_, res := x.hits(t, transcript.SearchQuery{Text: "word", Limit: 100})
	seen := map[int64]bool{}
	for _, h := range res.Hits {
		if seen[h.Seq] {
			t.Errorf("seq %d found twice", h.Seq)
		}
		seen[h.Seq] = true
	}
	if len(seen) != 100 {
		t.Errorf("found %d of 100 messages", len(seen))
	}
}

// TestSearchOverAHundredThousandMessages: 1,000 sessions of 100 messages written as the store
// writes them, indexed on open; the one message with a rare word is found, a word of every
// message pages.
func TestSearchOverAHundredThousandMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and indexes 100,000 messages")
	}
	dir := t.TempDir()
	nsDir := filepath.Join(dir, "transcripts", ns)
	if err := os.MkdirAll(nsDir, 0o750); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for s := range 1000 {
		id := "s" + itoa(int64(s))
		var buf []byte
		h, err := transcript.EncodeHeader(transcript.SessionHeader{Namespace: ns, SessionID: id, SessionKey: "agent:main:subagent:" + id, CreatedAt: ts})
		if err != nil {
			t.Fatal(err)
		}
		buf = append(buf, h...)
		for i := int64(1); i <= 100; i++ {
			text := "common words in message " + itoa(i) + " of " + id
			if s == 777 && i == 42 {
				text = "the zanzibar needle"
			}
			line, err := transcript.EncodeRecord(&transcript.Record{Seq: i, ID: id + "-" + itoa(i), TS: ts, Message: user(text)})
			if err != nil {
				t.Fatal(err)
			}
			buf = append(buf, line...)
		}
		if err := os.WriteFile(filepath.Join(nsDir, id+".jsonl"), buf, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	x := open(t, dir, search.Options{})
	got, _ := x.hits(t, transcript.SearchQuery{Text: "Zanzibar"})
	if d := cmp.Diff([]string{"agent:main:subagent:s777#42 the zanzibar needle"}, got); d != "" {
		t.Errorf("rare word (-want +got):\n%s", d)
	}
	seen := map[string]bool{}
	offset := 0
	for range 3 {
		page, res := x.hits(t, transcript.SearchQuery{Text: "common", Limit: 50, Offset: offset})
		if len(page) != 50 || res.NextOffset != offset+50 {
			t.Fatalf("page at %d: %d hits, next %d", offset, len(page), res.NextOffset)
		}
		for _, h := range page {
			if seen[h] {
				t.Errorf("%s on two pages", h)
			}
			seen[h] = true
		}
		offset = res.NextOffset
	}
}
