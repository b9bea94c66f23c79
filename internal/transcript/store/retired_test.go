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
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

func retiredRec(ns, id string, archived, retired time.Time) transcript.RetiredSession {
	return transcript.RetiredSession{Namespace: ns, Name: "n-" + id, SessionID: id, Key: "agent:a:" + id, AgentID: "a",
		MessageCount: 3, ArchivedAt: archived, RetiredAt: retired}
}

func retiredIDs(t *testing.T, r *store.RetiredStore, ns string) []string {
	t.Helper()
	return query(t, r, ns, transcript.RetiredQuery{})
}

// Records survive a reopen (and a torn last line), list the latest retired first, drop
// when unretired or pruned, and stop at their bounds.
func TestRetiredStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	r, err := store.OpenRetiredStore(dir, store.WithRetiredBounds(3, 4))
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"s1", "s2", "s3"} {
		if err := r.Retire(ctx, retiredRec("ns", id, t0.Add(time.Duration(i)*time.Hour), t0.Add(time.Duration(10+i)*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Retire(ctx, retiredRec("ns", "s4", t0, t0)); !errors.Is(err, transcript.ErrFull) {
		t.Errorf("a fourth record in a namespace bounded at 3: %v, want ErrFull", err)
	}
	if err := r.Retire(ctx, retiredRec("ns", "s3", t0.Add(2*time.Hour), t0.Add(20*time.Hour))); err != nil {
		t.Errorf("replacing a record at the bound: %v", err)
	}
	if err := r.Retire(ctx, retiredRec("other", "o1", t0, t0)); err != nil {
		t.Fatal(err)
	}
	if err := r.Retire(ctx, retiredRec("other", "o2", t0, t0)); !errors.Is(err, transcript.ErrFull) {
		t.Errorf("a fifth record in a store bounded at 4: %v, want ErrFull", err)
	}
	if err := r.Retire(ctx, transcript.RetiredSession{Namespace: "ns", SessionID: "../x", Name: "x", Key: "k", AgentID: "a"}); !errors.Is(err, transcript.ErrInvalid) {
		t.Errorf("a record with an unsafe id: %v, want ErrInvalid", err)
	}
	if diff := cmp.Diff([]string{"s3", "s2", "s1"}, retiredIDs(t, r, "ns")); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if err := r.Unretire(ctx, "ns", "s2"); err != nil {
		t.Fatal(err)
	}
	// A crash cut the last write short: the reopened store keeps what was whole.
	f, err := os.OpenFile(filepath.Join(dir, "ns.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"op":"retire","session":{"namesp`)
	_ = f.Close()
	re, err := store.OpenRetiredStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s3", "s1"}, retiredIDs(t, re, "ns")); diff != "" {
		t.Errorf("records after reopen (-want +got):\n%s", diff)
	}
	if err := re.Retire(ctx, retiredRec("ns", "s5", t0.Add(5*time.Hour), t0.Add(30*time.Hour))); err != nil {
		t.Fatal(err)
	}
	n, err := re.Prune(t0.Add(90 * time.Minute))
	if err != nil || n != 2 {
		t.Errorf("Prune = %d, %v; want 2 (s1 and o1 archived before the cutoff)", n, err)
	}
	again, err := store.OpenRetiredStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s5", "s3"}, retiredIDs(t, again, "ns")); diff != "" {
		t.Errorf("records after prune and reopen (-want +got):\n%s", diff)
	}
	if got := retiredIDs(t, again, "other"); len(got) != 0 {
		t.Errorf("other's records after prune: %v", got)
	}
}
