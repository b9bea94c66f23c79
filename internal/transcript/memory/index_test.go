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

package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/memory"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/search"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

const ns = transcripttest.Namespace

var offline = &transcript.EmbeddingsSpec{Provider: provider.Scripted}

func newEmbedder(s transcript.EmbeddingsSpec) (memory.Embedder, error) {
	return provider.NewEmbedder(provider.EmbedConfig{Provider: s.Provider, Model: s.Model, BaseURL: s.BaseURL, APIKey: s.APIKey, Dims: s.Dims})
}

// indexed is a store with its full-text and memory indexes, all under dir.
type indexed struct {
	st    *store.FileStore
	words *search.Index
	mem   *memory.Index
}

func open(t *testing.T, dir string) indexed {
	t.Helper()
	words, err := search.Open(filepath.Join(dir, "search.db"), search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := memory.Open(filepath.Join(dir, "memory.log"), memory.Options{NewEmbedder: newEmbedder})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenFileStore(filepath.Join(dir, "transcripts"), append(words.StoreOptions(), mem.StoreOptions()...)...)
	if err != nil {
		t.Fatal(err)
	}
	words.Start(st)
	mem.Start(st)
	x := indexed{st: st, words: words, mem: mem}
	t.Cleanup(x.close)
	return x
}

func (x indexed) close() {
	_ = x.mem.Close()
	_ = x.words.Close()
	_ = x.st.Close()
}

func (x indexed) sync(t *testing.T) {
	t.Helper()
	if err := x.mem.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := x.words.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (x indexed) say(t *testing.T, sid, role, text string) {
	t.Helper()
	if _, err := x.st.Append(context.Background(), ns, sid, transcript.AppendRequest{Message: transcripttest.TextMessage(role, text)}); err != nil {
		t.Fatal(err)
	}
}

// note appends an assistant message whose memory_write call holds text: a note.
func (x indexed) note(t *testing.T, sid, text string) {
	t.Helper()
	args, _ := json.Marshal(memory.Note{Text: text, Tags: []string{"ops"}})
	m := transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.ContentBlock{
		{Type: transcript.BlockToolCall, ID: "c1", Name: memory.WriteTool, Arguments: args}}}
	if _, err := x.st.Append(context.Background(), ns, sid, transcript.AppendRequest{Message: m}); err != nil {
		t.Fatal(err)
	}
}

func (x indexed) recall(t *testing.T, q transcript.MemoryQuery) []string {
	t.Helper()
	q.Namespace = ns
	res, err := x.mem.Recall(context.Background(), q, x.words)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, h := range res.Hits {
		out = append(out, h.SessionID+": "+h.Text)
	}
	return out
}

const fact = "the deploy password rotates on Fridays\n[tags: ops]"

// seed gives agent ops two sessions (the fact as a note in the first) and agent web one
// that says something else, with distractors that share no word with the question.
func seed(t *testing.T, x indexed) {
	t.Helper()
	transcripttest.CreateSession(t, x.st, "s1", "agent:ops:main")
	transcripttest.CreateSession(t, x.st, "s2", "agent:ops:task-2")
	transcripttest.CreateSession(t, x.st, "w1", "agent:web:main")
	x.say(t, "s1", transcript.RoleUser, "please remember how credentials work here")
	x.note(t, "s1", "the deploy password rotates on Fridays")
	x.say(t, "s1", transcript.RoleAssistant, "the staging cluster restarts every Monday morning")
	x.say(t, "s1", transcript.RoleUser, "lunch orders close at noon")
	x.say(t, "w1", transcript.RoleUser, "the web frontend is written in TypeScript")
	x.say(t, "s2", transcript.RoleUser, "what should I check first?")
}

// TestParaphraseRecall: a later session of the same Agent recalls the note by a paraphrase
// that shares one word stem with it ("deploy"), with only the Agent's notes visible; a
// session of another Agent recalls nothing of it. The offline embedder knows no synonyms:
// the match is the shared stem, ranked above distractors that share none.
func TestParaphraseRecall(t *testing.T) {
	x := open(t, t.TempDir())
	for _, a := range []string{"ops", "web"} {
		if err := x.mem.Register(ns, a, *offline); err != nil {
			t.Fatal(err)
		}
	}
	seed(t, x)
	x.sync(t)
	q := "when does the deploy secret change?"
	got := x.recall(t, transcript.MemoryQuery{Agent: "ops", Text: q, Limit: 1, SessionIDs: []string{"s2"}, Notes: true})
	if diff := cmp.Diff([]string{"s1: " + fact}, got); diff != "" {
		t.Errorf("ops's later session (self visibility, its notes) (-want +got):\n%s", diff)
	}
	got = x.recall(t, transcript.MemoryQuery{Agent: "ops", Text: q, Limit: 5, SessionIDs: []string{"s2"}})
	for _, h := range got {
		if h[:2] == "s1" {
			t.Errorf("without notes, a session that sees only itself recalled %q", h)
		}
	}
	got = x.recall(t, transcript.MemoryQuery{Agent: "web", Text: q, Limit: 5, SessionIDs: []string{"w1"}, Notes: true})
	for _, h := range got {
		if h[:2] != "w1" {
			t.Errorf("another Agent's session recalled %q", h)
		}
	}
	// A person who may read only w1 asks for ops's memory: nothing of s1.
	got = x.recall(t, transcript.MemoryQuery{Agent: "ops", Text: q, Limit: 5, SessionIDs: []string{"w1"}})
	if len(got) != 0 {
		t.Errorf("a reader of w1 recalled ops's memory: %q", got)
	}
}

// TestWordsAndMeaningFuse: a query whose every word is in a message is found by the
// full-text index too, and ranked first.
func TestWordsAndMeaningFuse(t *testing.T) {
	x := open(t, t.TempDir())
	if err := x.mem.Register(ns, "ops", *offline); err != nil {
		t.Fatal(err)
	}
	seed(t, x)
	x.sync(t)
	res, err := x.mem.Recall(context.Background(), transcript.MemoryQuery{Namespace: ns, Agent: "ops", Text: "staging cluster restarts"}, x.words)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || !res.Hits[0].ByWords || res.Hits[0].Similarity <= 0 || res.Hits[0].Seq != 3 {
		t.Fatalf("want the staging message first, found by words and meaning: %+v", res.Hits)
	}
}

// TestRebuildAfterTornLog: the store killed while indexing (the log's tail torn, its last
// batch lost) loses no chunk: the marks send the catch-up back to the transcripts.
func TestRebuildAfterTornLog(t *testing.T) {
	dir := t.TempDir()
	x := open(t, dir)
	if err := x.mem.Register(ns, "ops", *offline); err != nil {
		t.Fatal(err)
	}
	seed(t, x)
	x.sync(t)
	want := x.recall(t, transcript.MemoryQuery{Agent: "ops", Text: "deploy", Notes: true})
	x.close()
	path := filepath.Join(dir, "memory.log")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut into the middle of the last line, as a kill during its write would.
	if err := os.WriteFile(path, b[:len(b)-20], 0o640); err != nil {
		t.Fatal(err)
	}
	y := open(t, dir)
	y.sync(t)
	if diff := cmp.Diff(want, y.recall(t, transcript.MemoryQuery{Agent: "ops", Text: "deploy", Notes: true})); diff != "" {
		t.Errorf("after a torn log (-want +got):\n%s", diff)
	}
	// The log lost whole: rebuilt from the transcripts (the offline embedder is registered
	// again from the log's first line; here there is no log at all, so registering does it).
	y.close()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	z := open(t, dir)
	if err := z.mem.Register(ns, "ops", *offline); err != nil {
		t.Fatal(err)
	}
	z.sync(t)
	if diff := cmp.Diff(want, z.recall(t, transcript.MemoryQuery{Agent: "ops", Text: "deploy", Notes: true})); diff != "" {
		t.Errorf("after a lost log (-want +got):\n%s", diff)
	}
}

// TestRegistrationSurvivesRestart: a registration is durable once answered. A store killed
// before its indexer wrote a single chunk comes back knowing the Agent's embedder, and
// recalls by meaning without the Agent registering again.
func TestRegistrationSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	mem, err := memory.Open(filepath.Join(dir, "memory.log"), memory.Options{NewEmbedder: newEmbedder})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Register(ns, "ops", *offline); err != nil {
		t.Fatal(err)
	}
	_ = mem.Close() // never started: nothing indexed, only the registration
	x := open(t, dir)
	seed(t, x)
	x.sync(t)
	res, err := x.mem.Recall(context.Background(), transcript.MemoryQuery{Namespace: ns, Agent: "ops", Text: "when does the deploy secret change?", Notes: true}, x.words)
	if err != nil {
		t.Fatal(err)
	}
	if res.Vectors != "" {
		t.Fatalf("recall after a restart: %s", res.Vectors)
	}
	if len(res.Hits) == 0 || res.Hits[0].Similarity <= 0 {
		t.Fatalf("recall after a restart found nothing by meaning: %+v", res.Hits)
	}
}

// TestArchiveForgets: an archived session's chunks are not recalled, its notes neither.
func TestArchiveForgets(t *testing.T) {
	x := open(t, t.TempDir())
	if err := x.mem.Register(ns, "ops", *offline); err != nil {
		t.Fatal(err)
	}
	seed(t, x)
	x.sync(t)
	before := x.mem.Chunks()
	if err := x.st.Archive(context.Background(), ns, "s1"); err != nil {
		t.Fatal(err)
	}
	x.sync(t)
	for _, h := range x.recall(t, transcript.MemoryQuery{Agent: "ops", Text: "deploy password", Notes: true}) {
		if h[:2] == "s1" {
			t.Errorf("recalled from an archived session: %q", h)
		}
	}
	if after := x.mem.Chunks(); after != before-4 {
		t.Errorf("chunks %d -> %d, want 4 fewer", before, after)
	}
}

// TestGet: a chunk with its neighbours, and a note alone for a caller that sees only notes.
func TestGet(t *testing.T) {
	x := open(t, t.TempDir())
	if err := x.mem.Register(ns, "ops", *offline); err != nil {
		t.Fatal(err)
	}
	seed(t, x)
	x.sync(t)
	got, err := x.mem.Get(context.Background(), transcript.MemoryGet{Namespace: ns, SessionID: "s1", Seq: 2, Neighbours: 1})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{}
	for _, c := range got.Chunks {
		texts = append(texts, c.Text)
	}
	want := []string{"please remember how credentials work here", fact, "the staging cluster restarts every Monday morning"}
	if diff := cmp.Diff(want, texts); diff != "" || got.Index != 1 {
		t.Errorf("Get (-want +got):\n%s index %d", diff, got.Index)
	}
	got, err = x.mem.Get(context.Background(), transcript.MemoryGet{Namespace: ns, SessionID: "s1", Seq: 2, Neighbours: 1, NotesOnly: true})
	if err != nil || len(got.Chunks) != 1 {
		t.Errorf("notes only: %+v, %v", got, err)
	}
	if _, err := x.mem.Get(context.Background(), transcript.MemoryGet{Namespace: ns, SessionID: "s1", Seq: 3, NotesOnly: true}); err == nil {
		t.Error("notes only gave a message")
	}
}

// remote is the offline embedder posing as a provider: the namespace's rate bounds it.
type remote struct{ provider.Offline }

func (remote) Local() bool { return false }

// TestEmbeddingRate: a provider's calls share the namespace's rate (a tenth of a minute's
// calls at once, then one per 60s/CallsPerMinute on the index's clock); the offline
// embedder's do not.
func TestEmbeddingRate(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	dir := t.TempDir()
	mem, err := memory.Open(filepath.Join(dir, "memory.log"), memory.Options{Clock: fc, CallsPerMinute: 60,
		NewEmbedder: func(s transcript.EmbeddingsSpec) (memory.Embedder, error) {
			return remote{provider.Offline{N: s.Dims}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	st := transcripttest.OpenStore(t, filepath.Join(dir, "transcripts"), mem.StoreOptions()...)
	mem.Start(st)
	t.Cleanup(func() { _ = mem.Close() })
	if err := mem.Register(ns, "ops", transcript.EmbeddingsSpec{Provider: "openai", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	q := transcript.MemoryQuery{Namespace: ns, Agent: "ops", Text: "deploy"}
	for i := range 6 { // the burst: 60/10
		if _, err := mem.Recall(context.Background(), q, nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	done := make(chan error, 1)
	go func() { _, err := mem.Recall(context.Background(), q, nil); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("the seventh call did not wait for the rate: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	for !fc.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	fc.Step(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestIndexBound: past the store's bound new chunks are not kept.
func TestIndexBound(t *testing.T) {
	dir := t.TempDir()
	mem, err := memory.Open(filepath.Join(dir, "memory.log"), memory.Options{NewEmbedder: newEmbedder, MaxIndexBytes: 5 * (256 + 64 + 52)})
	if err != nil {
		t.Fatal(err)
	}
	st := transcripttest.OpenStore(t, filepath.Join(dir, "transcripts"), mem.StoreOptions()...)
	mem.Start(st)
	t.Cleanup(func() { _ = mem.Close() })
	if err := mem.Register(ns, "ops", *offline); err != nil {
		t.Fatal(err)
	}
	x := indexed{st: st, mem: mem}
	transcripttest.CreateSession(t, st, "s1", "agent:ops:main")
	for i := range 12 {
		x.say(t, "s1", transcript.RoleUser, fmt.Sprintf("message %d", i))
		if i == 9 {
			if err := mem.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := mem.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := mem.Chunks(); got != 5 {
		t.Errorf("%d chunks, want the 5 the bound holds", got)
	}
}
