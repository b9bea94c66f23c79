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
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// countedReads is a store that counts the reads it serves; the engine's lanes call it.
type countedReads struct {
	transcript.Store
	n atomic.Int64
}

func (s *countedReads) Read(ctx context.Context, ns, id string, o transcript.ReadOptions) (transcript.Page, error) {
	s.n.Add(1)
	return s.Store.Read(ctx, ns, id, o)
}

func withCountedReads(s *countedReads) fixtureOption {
	return func(o *Options) { s.Store = o.Store; o.Store = s }
}

// modelSaw is the role:text of each message of the latest model call.
func modelSaw(f *fixture) []string {
	var out []string
	for _, m := range f.calls.lastRequest().Messages {
		out = append(out, string(m.Role)+":"+m.Text)
	}
	return out
}

// warm runs turns a and b in session A: the cache holds its transcript afterwards (an empty
// transcript is not cached, so a's read leaves nothing and b's read fills it).
func warm(t *testing.T, f *fixture) {
	t.Helper()
	for _, id := range []string{"a", "b"} {
		f.submit(turnReq(id, keyA, "ping"))
		if res := f.await(id); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
}

// A session's next turn takes its history from what the lane's turns appended: the store
// is not read again, and the model sees the same history a read would give.
func TestCachedHistorySkipsTheRead(t *testing.T) {
	reads := &countedReads{}
	f := mainFixture(t, withCountedReads(reads))
	warm(t, f)
	before := reads.n.Load()
	f.submit(turnReq("c", keyA, "ping"))
	if res := f.await("c"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := reads.n.Load() - before; got != 0 {
		t.Errorf("reads of a turn after cached ones = %d, want 0", got)
	}
	if diff := cmp.Diff([]string{"user:ping", "assistant:pong", "user:ping", "assistant:pong", "user:ping"}, modelSaw(f)); diff != "" {
		t.Errorf("model's messages (-want +got):\n%s", diff)
	}
}

// A message appended by another writer between two turns is seen: the next turn's append
// does not follow the cached history, so the turn reads the store and uses that history,
// its own input once.
func TestForeignAppendIsRead(t *testing.T) {
	reads := &countedReads{}
	f := mainFixture(t, withCountedReads(reads))
	warm(t, f)
	cold := reads.n.Load()
	foreign := transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "from elsewhere"}}}
	if _, err := f.store.Append(context.Background(), ns, sidA, transcript.AppendRequest{IdempotencyKey: "other/0", Message: foreign}); err != nil {
		t.Fatal(err)
	}
	f.submit(turnReq("c", keyA, "ping"))
	if res := f.await("c"); res.Err != nil || res.Text != "pong" {
		t.Fatalf("result = %+v, want pong", res)
	}
	if got := reads.n.Load() - cold; got != 1 {
		t.Errorf("second turn's reads = %d, want 1", got)
	}
	if diff := cmp.Diff([]string{"user:ping", "assistant:pong", "user:ping", "assistant:pong", "user:from elsewhere", "user:ping"}, modelSaw(f)); diff != "" {
		t.Errorf("model's messages (-want +got):\n%s", diff)
	}
	want := []rec{
		{Key: "a/0", Role: "user", Text: "ping"}, {Key: "a/1", Role: "assistant", Text: "pong"},
		{Key: "b/0", Role: "user", Text: "ping"}, {Key: "b/1", Role: "assistant", Text: "pong"},
		{Key: "other/0", Role: "user", Text: "from elsewhere"},
		{Key: "c/0", Role: "user", Text: "ping"}, {Key: "c/1", Role: "assistant", Text: "pong"},
	}
	if diff := cmp.Diff(want, f.records(sidA)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	// The read brought the cache up to date: the turn after it reads nothing.
	f.submit(turnReq("d", keyA, "ping"))
	f.await("d")
	if got := reads.n.Load() - cold; got != 1 {
		t.Errorf("third turn read the store again: reads = %d, want 1", got)
	}
}
