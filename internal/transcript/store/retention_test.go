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
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

// Archived transcripts go once their retention has passed, on the store's clock; live
// transcripts and younger archives stay.
func TestPruneArchived(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(transcripttest.MustTime("2026-03-04T05:06:07Z"))
	root := t.TempDir()
	st := transcripttest.OpenStore(t, root, store.WithClock(clk))
	for _, id := range []string{"old", "young", "live"} {
		transcripttest.CreateSession(t, st, id, "key-"+id)
		transcripttest.AppendN(t, st, id, 1, false)
	}
	archive := func(id string) {
		if err := st.Archive(context.Background(), transcripttest.Namespace, id); err != nil {
			t.Fatal(err)
		}
	}
	archive("old")
	clk.SetTime(clk.Now().Add(20 * 24 * time.Hour))
	archive("young")
	// A stray file that only looks archived is not the store's to remove.
	stray := filepath.Join(root, transcripttest.Namespace, "notes.jsonl.deleted.soon")
	if err := os.WriteFile(stray, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	left := func() []string {
		names, _ := filepath.Glob(filepath.Join(root, transcripttest.Namespace, "*"))
		for i := range names {
			names[i] = filepath.Base(names[i])
		}
		return names
	}

	if n, err := st.PruneArchived(0); n != 0 || err != nil {
		t.Fatalf("retention 0 keeps everything: removed %d, %v", n, err)
	}
	clk.SetTime(clk.Now().Add(11 * 24 * time.Hour)) // old: 31 days archived, young: 11
	n, err := st.PruneArchived(30 * 24 * time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("removed %d, %v; want 1 (files: %v)", n, err, left())
	}
	youngName := "young.jsonl.deleted." + strconv.FormatInt(transcripttest.MustTime("2026-03-04T05:06:07Z").Add(20*24*time.Hour).Unix(), 10)
	if d := cmp.Diff([]string{"live.jsonl", "notes.jsonl.deleted.soon", youngName}, left()); d != "" {
		t.Errorf("files left (-want +got):\n%s", d)
	}
	if _, err := st.Stats(context.Background(), transcripttest.Namespace, "live"); err != nil {
		t.Errorf("the live transcript was touched: %v", err)
	}
}
