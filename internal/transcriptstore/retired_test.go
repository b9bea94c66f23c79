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

package transcriptstore_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// The manager's retention, through its transcript client and the internal API: a record
// written is listed, a full store refuses with ErrFull, the archived transcript reads, the
// record goes when unretired, and the pruner drops records with their transcripts.
func TestRetiredRecordsOverTheInternalAPI(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st := transcripttest.OpenStore(t, root)
	recs, err := store.OpenRetiredStore(root+"/"+store.RetiredDir, store.WithRetiredBounds(1, 10))
	if err != nil {
		t.Fatal(err)
	}
	retired := transcriptstore.RetiredRecords{Records: recs, Files: st}
	srv := httptest.NewServer(transcriptstore.InternalAPI(st, nil, nil, transcriptstore.NewHookKeyring(), nil, retired))
	defer srv.Close()
	c := client.NewLoopbackClient(srv.URL)

	transcripttest.CreateSession(t, st, "s1", "agent:a:main")
	transcripttest.AppendN(t, st, "s1", 3, false)
	if err := c.Archive(ctx, transcripttest.Namespace, "s1"); err != nil {
		t.Fatal(err)
	}
	archivedAt := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rec := transcript.RetiredSession{Namespace: transcripttest.Namespace, Name: "agent-a-main", SessionID: "s1", Key: "agent:a:main",
		AgentID: "a", MessageCount: 3, ArchivedAt: archivedAt, RetiredAt: archivedAt.Add(time.Hour), Reason: "age"}
	if err := c.Retire(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, err := c.RetiredSessions(ctx, transcripttest.Namespace, transcript.RetiredQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]transcript.RetiredSession{rec}, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	for name, q := range map[string]transcript.RetiredQuery{
		"by key": {Ref: "agent:a:main"}, "by sessionId": {Ref: "s1"}, "searched": {Search: "A:MAIN"}, "a page": {Limit: 1},
	} {
		if got, err := c.RetiredSessions(ctx, transcripttest.Namespace, q); err != nil || len(got) != 1 || got[0].SessionID != "s1" {
			t.Errorf("records %s over the API: %v, %v; want s1", name, got, err)
		}
	}
	if got, err := c.RetiredSessions(ctx, transcripttest.Namespace, transcript.RetiredQuery{Limit: 1, After: rec.Cursor()}); err != nil || len(got) != 0 {
		t.Errorf("the page after the last record: %v, %v; want none", got, err)
	}
	if _, err := c.RetiredSessions(ctx, transcripttest.Namespace, transcript.RetiredQuery{Limit: 1, After: "not/../a cursor"}); !errors.Is(err, transcript.ErrInvalid) {
		t.Errorf("a bad cursor: %v, want ErrInvalid", err)
	}
	other := rec
	other.SessionID, other.Key = "s2", "agent:a:other"
	if err := c.Retire(ctx, other); !errors.Is(err, transcript.ErrFull) {
		t.Errorf("a record over the namespace's bound: %v, want ErrFull", err)
	}
	page, err := c.ReadArchived(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: 10, IncludeTools: true})
	if err != nil || len(page.Messages) != 3 {
		t.Errorf("archived history: %d messages, %v; want 3", len(page.Messages), err)
	}
	if _, err := c.ReadArchived(ctx, transcripttest.Namespace, "nope", transcript.ReadOptions{}); !errors.Is(err, transcript.ErrNotFound) {
		t.Errorf("archived history of an unknown session: %v, want ErrNotFound", err)
	}

	pruner := transcriptstore.ArchivePruner{Files: st, Records: recs, Clock: clocktesting.NewFakePassiveClock(archivedAt.Add(31 * 24 * time.Hour))}
	if _, err := pruner.PruneArchived(30 * 24 * time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.RetiredSessions(ctx, transcripttest.Namespace, transcript.RetiredQuery{}); len(got) != 0 {
		t.Errorf("records after the retention: %v", got)
	}
	if err := c.Retire(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := c.Unretire(ctx, transcripttest.Namespace, "s2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.RetiredSessions(ctx, transcripttest.Namespace, transcript.RetiredQuery{}); len(got) != 0 {
		t.Errorf("records after unretire: %v", got)
	}
}
