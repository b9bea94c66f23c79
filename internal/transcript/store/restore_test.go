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
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

// An archived transcript comes back whole: its messages read, its key resolves, appends go
// on from its last seq, and a reopened store still serves it.
func TestRestoreReopens(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(transcripttest.MustTime("2026-03-04T05:06:07Z"))
	root := t.TempDir()
	var restored []string
	st := transcripttest.OpenStore(t, root, store.WithClock(clk),
		store.WithRestoreHook(func(h transcript.SessionHeader) { restored = append(restored, h.SessionID) }))
	transcripttest.CreateSession(t, st, "s1", "agent:a:main")
	transcripttest.AppendN(t, st, "s1", 3, false)
	if err := st.Archive(ctx, transcripttest.Namespace, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := st.Restore(ctx, transcripttest.Namespace, "s1"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s1"}, restored); diff != "" {
		t.Errorf("restore hook (-want +got):\n%s", diff)
	}
	if h, err := st.Resolve(transcripttest.Namespace, "agent:a:main"); err != nil || h.SessionID != "s1" {
		t.Errorf("Resolve after restore = %q, %v", h.SessionID, err)
	}
	appendOne(t, st, "s1", "after-restore")
	page, err := st.Read(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(transcripttest.SeqRange(1, 4), transcripttest.Seqs(page.Messages)); diff != "" {
		t.Errorf("seqs after restore and append (-want +got):\n%s", diff)
	}
	left, _ := filepath.Glob(filepath.Join(root, transcripttest.Namespace, "s1.jsonl.deleted.*"))
	if len(left) != 0 {
		t.Errorf("archived names left: %v", left)
	}
	if err := st.Restore(ctx, transcripttest.Namespace, "s1"); err != nil {
		t.Errorf("restore of a live session: %v, want a no-op", err)
	}
	_ = st.Close()
	re := transcripttest.OpenStore(t, root)
	stats, err := re.Stats(ctx, transcripttest.Namespace, "s1")
	if err != nil || stats.MessageCount != 4 {
		t.Errorf("after reopen: %d messages, %v; want 4", stats.MessageCount, err)
	}
}

// A transcript archived twice comes back as its latest archive left it.
func TestRestoreTakesTheNewestArchive(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(transcripttest.MustTime("2026-03-04T05:06:07Z"))
	root := t.TempDir()
	st := transcripttest.OpenStore(t, root, store.WithClock(clk))
	transcripttest.CreateSession(t, st, "s1", "k")
	transcripttest.AppendN(t, st, "s1", 1, false)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Archive(ctx, transcripttest.Namespace, "s1"))
	dir := filepath.Join(root, transcripttest.Namespace)
	first, _ := filepath.Glob(filepath.Join(dir, "s1.jsonl.deleted.*"))
	must(st.Restore(ctx, transcripttest.Namespace, "s1"))
	// An older copy of the first archive, as a crash between link and remove leaves one.
	must(os.WriteFile(first[0], []byte("stale"), 0o600))
	appendOne(t, st, "s1", "second-1")
	appendOne(t, st, "s1", "second-2")
	clk.SetTime(clk.Now().Add(time.Hour))
	must(st.Archive(ctx, transcripttest.Namespace, "s1"))
	must(st.Restore(ctx, transcripttest.Namespace, "s1"))
	stats, err := st.Stats(ctx, transcripttest.Namespace, "s1")
	if err != nil || stats.MessageCount != 3 {
		t.Errorf("restored %d messages, %v; want the newest archive's 3", stats.MessageCount, err)
	}
}

// Nothing to restore is not found: a session never archived, or one whose archive the
// retention removed.
func TestRestoreNotFound(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(transcripttest.MustTime("2026-03-04T05:06:07Z"))
	st := transcripttest.OpenStore(t, t.TempDir(), store.WithClock(clk))
	transcripttest.CreateSession(t, st, "pruned", "k")
	if err := st.Archive(ctx, transcripttest.Namespace, "pruned"); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(48 * time.Hour))
	if n, err := st.PruneArchived(24 * time.Hour); err != nil || n != 1 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	for _, id := range []string{"never", "pruned"} {
		err := st.Restore(ctx, transcripttest.Namespace, id)
		if !errors.Is(err, transcript.ErrNotFound) {
			t.Errorf("restore of %s: %v, want ErrNotFound", id, err)
		}
	}
	if err := st.Restore(ctx, transcripttest.Namespace, "../x"); err == nil {
		t.Errorf("restore of a path: no error")
	}
}

// appendOne appends a message under its own idempotency key.
func appendOne(t *testing.T, st transcript.Store, id, key string) {
	t.Helper()
	if _, err := st.Append(context.Background(), transcripttest.Namespace, id,
		transcript.AppendRequest{IdempotencyKey: key, Message: transcripttest.TextMessage(transcript.RoleUser, key)}); err != nil {
		t.Fatal(err)
	}
}

// Every Store, the sidecar's internal API among them, restores alike: an archived session
// is not found, then found whole once restored; restoring a live one changes nothing and
// one never created is not found.
func TestRestoreConformance(t *testing.T) {
	ctx := context.Background()
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			s := mk(t)
			transcripttest.CreateSession(t, s, "s1", "agent:a:main")
			transcripttest.AppendN(t, s, "s1", 2, false)
			if err := s.Archive(ctx, transcripttest.Namespace, "s1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Read(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: 10}); !errors.Is(err, transcript.ErrNotFound) {
				t.Fatalf("read of an archived session: %v, want ErrNotFound", err)
			}
			for range 2 { // the second is a restore of a live session
				if err := s.Restore(ctx, transcripttest.Namespace, "s1"); err != nil {
					t.Fatal(err)
				}
			}
			page, err := s.Read(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(transcripttest.SeqRange(1, 2), transcripttest.Seqs(page.Messages)); diff != "" {
				t.Errorf("restored seqs (-want +got):\n%s", diff)
			}
			if err := s.Restore(ctx, transcripttest.Namespace, "never"); !errors.Is(err, transcript.ErrNotFound) {
				t.Errorf("restore of a session never created: %v, want ErrNotFound", err)
			}
		})
	}
}
