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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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
	if _, err := c.Retire(ctx, rec); err != nil {
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
	if _, err := c.Retire(ctx, other); !errors.Is(err, transcript.ErrFull) {
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
	if _, err := c.Retire(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := c.Unretire(ctx, transcripttest.Namespace, "s2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.RetiredSessions(ctx, transcripttest.Namespace, transcript.RetiredQuery{}); len(got) != 0 {
		t.Errorf("records after unretire: %v", got)
	}
}

// A batch over the internal API: the store keeps up to its bound and the client says how
// many with ErrFull; a batch whose encoding is over one request's bound goes in several;
// a request over the bounds of count or size is refused with a clear error, nothing kept.
func TestRetiredBatchOverTheInternalAPI(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st := transcripttest.OpenStore(t, root)
	recs, err := store.OpenRetiredStore(root+"/"+store.RetiredDir, store.WithRetiredBounds(transcript.MaxRetiredBatch+2, 10000))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(transcriptstore.InternalAPI(st, nil, nil, transcriptstore.NewHookKeyring(), nil,
		transcriptstore.RetiredRecords{Records: recs, Files: st}))
	defer srv.Close()
	c := client.NewLoopbackClient(srv.URL)
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// Records of the longest fields a record may have, each escaped six times over in JSON:
	// about 40 KiB each, so a batch of them is over one request's bound.
	wide := strings.Repeat("<", 512)
	batch := func(prefix string, n int) []transcript.RetiredSession {
		out := make([]transcript.RetiredSession, n)
		for i := range out {
			id := fmt.Sprintf("%s%d", prefix, i)
			out[i] = transcript.RetiredSession{Namespace: transcripttest.Namespace, Name: "n-" + id, SessionID: id, Key: "agent:a:" + id,
				AgentID: "a", DisplayName: wide, Label: wide, SpawnedBy: wide, ParentSessionKey: wide, TranscriptPath: wide, Channel: wide,
				ArchivedAt: at, RetiredAt: at}
		}
		return out
	}
	count := func() int {
		got, err := c.RetiredSessions(ctx, transcripttest.Namespace, transcript.RetiredQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}

	if n, err := c.Retire(ctx, batch("w", transcript.MaxRetiredBatch)...); n != transcript.MaxRetiredBatch || err != nil {
		t.Fatalf("a batch of %d wide records: %d kept, %v", transcript.MaxRetiredBatch, n, err)
	}
	if n, err := c.Retire(ctx, batch("f", 5)...); n != 2 || !errors.Is(err, transcript.ErrFull) {
		t.Errorf("a batch of 5 with room for 2: %d kept, %v; want 2, ErrFull", n, err)
	}
	if got := count(); got != transcript.MaxRetiredBatch+2 {
		t.Errorf("%d records, want %d", got, transcript.MaxRetiredBatch+2)
	}
	if _, err := c.Retire(ctx, batch("x", transcript.MaxRetiredBatch+1)...); !errors.Is(err, transcript.ErrInvalid) {
		t.Errorf("a batch over MaxRetiredBatch: %v, want ErrInvalid", err)
	}

	// What the client never sends, the store refuses too.
	post := func(v any) (int, string) {
		b, _ := json.Marshal(v)
		resp, err := http.Post(srv.URL+transcript.APIRetiredPath, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := post(transcript.RetiredList{Sessions: batch("y", transcript.MaxRetiredBatch+1)[:transcript.MaxRetiredBatch+1]}); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over MaxRetiredRequestBytes: %d %s, want 413", code, body)
	}
	small := batch("z", transcript.MaxRetiredBatch+1)
	for i := range small {
		small[i].DisplayName, small[i].Label, small[i].SpawnedBy, small[i].ParentSessionKey, small[i].TranscriptPath, small[i].Channel = "", "", "", "", "", ""
	}
	if code, body := post(transcript.RetiredList{Sessions: small}); code != http.StatusBadRequest || !strings.Contains(body, "a batch holds 1 to 500") {
		t.Errorf("a batch over MaxRetiredBatch: %d %s, want 400 saying the bound", code, body)
	}
	if code, body := post(transcript.RetiredSession{Namespace: transcripttest.Namespace, Name: "n", SessionID: "one", Key: "k", AgentID: "a"}); code != http.StatusBadRequest {
		t.Errorf("a single record, not a batch: %d %s, want 400", code, body)
	}
	if got := count(); got != transcript.MaxRetiredBatch+2 {
		t.Errorf("%d records after the refused requests, want %d", got, transcript.MaxRetiredBatch+2)
	}
}
