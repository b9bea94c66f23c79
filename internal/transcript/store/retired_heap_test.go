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
	"runtime"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// fullRecord is a retired sub-agent's record with every field a real one carries, its
// sessionId a UUID: what the heap figure is measured on.
func fullRecord(ns string, i int, t0 time.Time) transcript.RetiredSession {
	id := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", i, i%0x10000, i%0x1000, (i/7)%0x1000, i*7919)
	at := t0.Add(time.Duration(i) * time.Second)
	return transcript.RetiredSession{Namespace: ns, Name: fmt.Sprintf("agent-main-subagent-%08x-%08x", i, i*31),
		SessionID: id, Key: "agent:main:subagent:" + id, AgentID: "main", Kind: "subagent", Channel: "internal", ChatType: "direct",
		DisplayName: fmt.Sprintf("Sub-agent %d", i), Label: fmt.Sprintf("research task %d", i), SpawnedBy: "agent:main:main",
		ParentSessionKey: "agent:main:main", MessageCount: 12, InputTokens: 4096, OutputTokens: 1024, TotalTokens: 5120,
		TranscriptPath: ns + "/" + id + ".jsonl.deleted.1772323200", CreatedAt: at.Add(-2 * time.Hour), UpdatedAt: at.Add(-time.Hour),
		ArchivedAt: at, RetiredAt: at.Add(7 * 24 * time.Hour), Reason: "age"}
}

// fastDir is a directory on tmpfs where there is one (an fsync there is cheap, so 100,000
// durable writes take seconds), else a test's temporary directory; ok says it is tmpfs.
func fastDir(tb testing.TB) (dir string, ok bool) {
	tb.Helper()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "retired-")
		if err == nil {
			tb.Cleanup(func() { _ = os.RemoveAll(dir) })
			return dir, true
		}
	}
	return tb.TempDir(), false
}

// heapInuse is the heap in use after a full collection.
func heapInuse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// The store's memory per retired record, the figure docs/operations/scaling.md gives: a
// store reopened over 100,000 records holds at most 200 bytes of heap for each (the
// records stay on disk; only their index is in memory).
func TestRetiredHeapPerRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 records")
	}
	const n = 100000
	ctx := context.Background()
	dir, ok := fastDir(t)
	if !ok {
		t.Skip("no tmpfs at /dev/shm: 100,000 fsync'd writes to disk take too long")
	}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	w, err := store.OpenRetiredStore(dir, store.WithRetiredBounds(n, n))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.Retire(ctx, fullRecord("team", i, t0)); err != nil {
			t.Fatal(err)
		}
	}
	w = nil
	before := heapInuse()
	r, err := store.OpenRetiredStore(dir, store.WithRetiredBounds(n, n))
	if err != nil {
		t.Fatal(err)
	}
	after := heapInuse()
	runtime.KeepAlive(r)
	per := (int64(after) - int64(before)) / n
	t.Logf("retired_heap_bytes_per_record %d (%d records, heap in use %d -> %d bytes)", per, n, before, after)
	if per > 200 {
		t.Errorf("the store holds %d bytes of heap per retired record; want at most 200", per)
	}
}
