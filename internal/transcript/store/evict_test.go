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

package store

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func text(s string) transcript.Message {
	return transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: s}}}
}

// Past the bound the least recently used idle sessions are forgotten and loaded again on
// their next use: appends keep their seqs and idempotency keys, counters stay whole, and a
// followed session stays loaded with its follower served.
func TestSessionsBeyondTheBoundAreLoadedAgain(t *testing.T) {
	ctx := context.Background()
	st, err := OpenFileStore(t.TempDir(), WithMaxLoadedSessions(2))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	ids := []string{"s0", "s1", "s2", "s3", "s4"}
	for _, id := range ids {
		if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: "team", SessionID: id, SessionKey: "agent:a:" + id}); err != nil {
			t.Fatal(err)
		}
	}
	sub, _, err := st.Subscribe(ctx, "team", "s0")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for round := int64(1); round <= 3; round++ {
		for _, id := range ids {
			recs, err := st.Append(ctx, "team", id, transcript.AppendRequest{IdempotencyKey: fmt.Sprintf("%s-%d", id, round), Message: text("hi")})
			if err != nil || recs[0].Seq != round {
				t.Fatalf("append %d to %s: seq %v, err %v", round, id, recs, err)
			}
		}
		st.mu.Lock()
		loaded := len(st.sessions)
		st.mu.Unlock()
		if loaded > 3 { // the bound and the followed session
			t.Fatalf("round %d: %d sessions loaded, want at most 3", round, loaded)
		}
	}
	again, err := st.Append(ctx, "team", "s1", transcript.AppendRequest{IdempotencyKey: "s1-1", Message: text("hi")})
	if err != nil || again[0].Seq != 1 {
		t.Fatalf("a retried append after the session was forgotten: %v, %v; want the stored seq 1", again, err)
	}
	for _, id := range ids {
		stats, err := st.Stats(ctx, "team", id)
		if err != nil || stats.MessageCount != 3 {
			t.Fatalf("%s: %d messages, err %v; want 3", id, stats.MessageCount, err)
		}
	}
	for got := 0; got < 3; {
		got += len(<-sub.C)
	}
}

// Appends and reads of more sessions than the bound, at once, keep every session's seqs
// whole and in order (run with -race).
func TestEvictionUnderConcurrentUse(t *testing.T) {
	ctx := context.Background()
	st, err := OpenFileStore(t.TempDir(), WithMaxLoadedSessions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	const sessions, appends = 6, 20
	for i := range sessions {
		if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: "team", SessionID: fmt.Sprint("s", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range sessions {
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprint("s", i)
				for n := range appends {
					if _, err := st.Append(ctx, "team", id, transcript.AppendRequest{IdempotencyKey: fmt.Sprint(w, "-", n), Message: text("x")}); err != nil {
						t.Error(err)
						return
					}
					if _, err := st.Read(ctx, "team", fmt.Sprint("s", (i+1)%sessions), transcript.ReadOptions{Limit: 5}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	for i := range sessions {
		page, err := st.Read(ctx, "team", fmt.Sprint("s", i), transcript.ReadOptions{Limit: 100})
		if err != nil || len(page.Messages) != 2*appends {
			t.Fatalf("s%d: %d records, err %v; want %d", i, len(page.Messages), err, 2*appends)
		}
		for j, r := range page.Messages {
			if r.Seq != int64(j+1) {
				t.Fatalf("s%d: record %d has seq %d", i, j, r.Seq)
			}
		}
	}
}
