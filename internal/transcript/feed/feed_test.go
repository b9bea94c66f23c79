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

package feed

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

func commit(sid string, bytes int) Job {
	return Job{Header: transcript.SessionHeader{Namespace: "ns", SessionID: sid}, Events: []store.Event{{Seq: 1, Data: make([]byte, bytes)}}}
}

// TestOverflow: a job past the queue's length or bytes marks its session dirty instead of
// waiting, and the writer is woken.
func TestOverflow(t *testing.T) {
	q := New(2, 1000)
	q.Enqueue(commit("a", 10))
	q.Enqueue(commit("b", 2000)) // over the bytes
	q.Enqueue(commit("c", 10))
	q.Enqueue(commit("d", 10)) // over the length
	got := q.TakeDirty()
	slices.SortFunc(got, func(a, b Ref) int { return strings.Compare(a.SID, b.SID) })
	if diff := cmp.Diff([]Ref{{"ns", "b"}, {"ns", "d"}}, got); diff != "" {
		t.Errorf("dirty (-want +got):\n%s", diff)
	}
	select {
	case <-q.Wake():
	default:
		t.Error("the writer was not woken")
	}
	if len(q.TakeDirty()) != 0 {
		t.Error("TakeDirty did not empty the set")
	}
}

// TestCollectAndSync: a batch ends at a barrier; Done runs the catch-up once, then lets the
// barrier's Sync return.
func TestCollectAndSync(t *testing.T) {
	q := New(8, 1<<20)
	q.Enqueue(commit("a", 1))
	q.Enqueue(commit("b", 1))
	synced := make(chan error, 1)
	go func() { synced <- q.Sync(context.Background()) }()
	for len(q.jobs) < 3 { // a, b and the barrier
		time.Sleep(time.Millisecond)
	}
	batch := q.Collect(context.Background(), <-q.Jobs(), make([]Job, 0, 8), nil)
	if len(batch) != 3 || batch[2].Barrier == nil {
		t.Fatalf("batch of %d, want a, b and the barrier that ends it", len(batch))
	}
	caughtUp := 0
	q.Done(batch, func() { caughtUp++ })
	if err := <-synced; err != nil || caughtUp != 1 {
		t.Errorf("sync %v, catch-ups %d", err, caughtUp)
	}
	if q.queued.Load() != 0 {
		t.Errorf("%d bytes still counted", q.queued.Load())
	}
}
