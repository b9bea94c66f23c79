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
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

// TestIndexSpend: the indexer's embeddings are owed to the manager until it acknowledges the
// tally that named them (once: a repeated or stale acknowledgement takes nothing off), and a
// namespace the manager holds indexes nothing new until it is released, then catches up.
func TestIndexSpend(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	if err := x.mem.Register(ns, "ops", *offline); err != nil {
		t.Fatal(err)
	}
	transcripttest.CreateSession(t, x.st, "s1", "agent:ops:main")
	x.say(t, "s1", transcript.RoleUser, "the deploy password rotates on Fridays") // 6 words: 6 tokens offline
	x.sync(t)

	first, err := x.mem.IndexSpend(ctx, transcript.IndexSpendAck{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{ns: 6}, first.Owed); diff != "" {
		t.Errorf("owed after one message (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ns}, first.Namespaces); diff != "" {
		t.Errorf("namespaces with memory (-want +got):\n%s", diff)
	}
	// Acknowledged and held: nothing owed, and a new message is not indexed.
	second, _ := x.mem.IndexSpend(ctx, transcript.IndexSpendAck{Tally: first.ID, Held: []string{ns}})
	if len(second.Owed) != 0 {
		t.Errorf("owed after the acknowledgement: %v", second.Owed)
	}
	x.say(t, "s1", transcript.RoleUser, "lunch orders close at noon")
	x.sync(t)
	lunch := transcript.MemoryQuery{Agent: "ops", Text: "lunch orders close at noon", Limit: 1, SessionIDs: []string{"s1"}}
	if byMeaning(t, x, lunch) {
		t.Error("a held namespace's new message was embedded")
	}
	// A stale acknowledgement takes nothing off; released, the message is caught up.
	third, _ := x.mem.IndexSpend(ctx, transcript.IndexSpendAck{Tally: first.ID})
	if len(third.Owed) != 0 {
		t.Errorf("owed while held: %v", third.Owed)
	}
	x.sync(t)
	if !byMeaning(t, x, lunch) {
		t.Error("a released namespace's waiting message was not caught up")
	}
	fourth, _ := x.mem.IndexSpend(ctx, transcript.IndexSpendAck{Tally: "not-a-tally"})
	if diff := cmp.Diff(map[string]int64{ns: 5}, fourth.Owed); diff != "" {
		t.Errorf("owed after the catch-up (-want +got):\n%s", diff)
	}
	for range 2 { // acknowledged twice: taken off once
		fifth, _ := x.mem.IndexSpend(ctx, transcript.IndexSpendAck{Tally: fourth.ID})
		if len(fifth.Owed) != 0 {
			t.Errorf("owed after acknowledging the catch-up: %v", fifth.Owed)
		}
	}
}

// byMeaning says whether the recall's best hit was found by meaning.
func byMeaning(t *testing.T, x indexed, q transcript.MemoryQuery) bool {
	t.Helper()
	q.Namespace = ns
	res, err := x.mem.Recall(context.Background(), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Hits) > 0 && res.Hits[0].Similarity > 0.99
}
