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
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// writeTranscript creates a session with n messages in a fresh store, closes it and returns
// the root and the file path.
func writeTranscript(t *testing.T, n int) (string, string) {
	t.Helper()
	root := t.TempDir()
	st, err := store.OpenFileStore(root)
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CreateSession(t, st, "s1", "agent:a:main")
	transcripttest.AppendN(t, st, "s1", n, false)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return root, filepath.Join(root, transcripttest.Namespace, "s1.jsonl")
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func TestTornTailRepair(t *testing.T) {
	cases := map[string]struct {
		tail         string
		wantRepaired int64 // bytes truncated; 0 = no repair
	}{
		"clean":                 {tail: ""},
		"torn record":           {tail: `{"seq":4,"id":"x","ts":"2026-01-01T00:00:00Z","mess`, wantRepaired: 51},
		"unparsable last line":  {tail: "garbage\n", wantRepaired: 8},
		"nul bytes":             {tail: "\x00\x00\x00\x00", wantRepaired: 4},
		"zero seq last line":    {tail: `{"seq":0,"message":{"role":"user"}}` + "\n", wantRepaired: 36},
		"newline only":          {tail: "\n", wantRepaired: 1},
		"torn after bad line":   {tail: "bad\n{\"seq\":", wantRepaired: 11},
		"just a partial object": {tail: "{", wantRepaired: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root, path := writeTranscript(t, 3)
			appendBytes(t, path, []byte(tc.tail))
			st := transcripttest.OpenStore(t, root)
			var got int64
			for _, r := range st.Repairs() {
				got += r.TruncatedBytes
			}
			if got != tc.wantRepaired {
				t.Errorf("truncated %d bytes, want %d", got, tc.wantRepaired)
			}
			recs, err := st.Append(context.Background(), transcripttest.Namespace, "s1", transcript.AppendRequest{IdempotencyKey: "after", Message: transcripttest.TextMessage(transcript.RoleUser, "after")})
			if err != nil {
				t.Fatal(err)
			}
			if recs[0].Seq != 4 {
				t.Errorf("append after repair got seq %d, want 4", recs[0].Seq)
			}
			assertCleanFile(t, path, 4)
		})
	}
}

// assertCleanFile reads the file naively: a header then records 1..n, every line parses.
func assertCleanFile(t *testing.T, path string, n int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		t.Fatalf("file does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if _, err := transcript.DecodeHeader([]byte(lines[0])); err != nil {
		t.Fatalf("header: %v", err)
	}
	var got []int64
	for i, l := range lines[1:] {
		r, err := transcript.DecodeRecord([]byte(l))
		if err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		got = append(got, r.Seq)
	}
	if diff := cmp.Diff(transcripttest.SeqRange(1, n), got); diff != "" {
		t.Errorf("seqs in file (-want +got):\n%s", diff)
	}
}

func TestCorruptMiddleLineSkipped(t *testing.T) {
	cases := map[string]string{
		"garbage":        "this is not json",
		"nul run":        "\x00\x00\x00\x00\x00",
		"record no role": `{"seq":99,"message":{}}`,
		"stale seq":      `{"seq":1,"id":"dup","ts":"2026-01-01T00:00:00Z","message":{"role":"user","content":[]}}`,
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			root, path := writeTranscript(t, 3)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(b), "\n")
			// header, r1, BAD, r2, r3
			mixed := lines[0] + lines[1] + bad + "\n" + strings.Join(lines[2:], "")
			if err := os.WriteFile(path, []byte(mixed), 0o640); err != nil {
				t.Fatal(err)
			}
			st := transcripttest.OpenStore(t, root)
			page, err := st.Read(context.Background(), transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: 10, IncludeTools: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int64{1, 2, 3}, transcripttest.Seqs(page.Messages)); diff != "" {
				t.Errorf("seqs (-want +got):\n%s", diff)
			}
			if n, _ := st.Corrupt(transcripttest.Namespace, "s1"); n != 1 {
				t.Errorf("corrupt count %d, want 1", n)
			}
			if len(st.Repairs()) != 0 {
				t.Errorf("a middle line must not trigger a tail repair: %+v", st.Repairs())
			}
			recs, err := st.Append(context.Background(), transcripttest.Namespace, "s1", transcript.AppendRequest{IdempotencyKey: "k2", Message: transcripttest.TextMessage(transcript.RoleUser, "dup of 2")})
			if err != nil {
				t.Fatal(err)
			}
			if recs[0].Seq != 2 {
				t.Errorf("idempotency key k2 resolved to seq %d, want 2", recs[0].Seq)
			}
		})
	}
}

func TestKeyIndexRebuiltFromHeaders(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st := transcripttest.OpenStore(t, root)
	transcripttest.CreateSession(t, st, "old", "agent:a:main")
	transcripttest.CreateSession(t, st, "other", "agent:a:telegram:group:1")
	if err := st.Archive(ctx, transcripttest.Namespace, "old"); err != nil {
		t.Fatal(err)
	}
	transcripttest.CreateSession(t, st, "new", "agent:a:main")
	_ = st.Close()

	re := transcripttest.OpenStore(t, root)
	cases := map[string]struct {
		ns, key string
		wantID  string
		wantErr error
	}{
		"key":                  {ns: transcripttest.Namespace, key: "agent:a:main", wantID: "new"},
		"group key":            {ns: transcripttest.Namespace, key: "agent:a:telegram:group:1", wantID: "other"},
		"session id":           {ns: transcripttest.Namespace, key: "other", wantID: "other"},
		"archived id":          {ns: transcripttest.Namespace, key: "old", wantErr: transcript.ErrNotFound},
		"other namespace":      {ns: "team-b", key: "agent:a:main", wantErr: transcript.ErrNotFound},
		"unknown key":          {ns: transcripttest.Namespace, key: "agent:zzz:main", wantErr: transcript.ErrNotFound},
		"path traversal probe": {ns: "..", key: "x", wantErr: transcript.ErrNotFound},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h, err := re.Resolve(tc.ns, tc.key)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Resolve error %v, want %v", err, tc.wantErr)
			}
			if h.SessionID != tc.wantID {
				t.Errorf("Resolve = %q, want %q", h.SessionID, tc.wantID)
			}
		})
	}
}

func TestArchiveRenames(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(transcripttest.MustTime("2026-03-04T05:06:07Z"))
	root := t.TempDir()
	st := transcripttest.OpenStore(t, root, store.WithClock(clk))
	transcripttest.CreateSession(t, st, "s1", "k")
	transcripttest.AppendN(t, st, "s1", 2, false)
	if err := st.Archive(context.Background(), transcripttest.Namespace, "s1"); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, transcripttest.Namespace, "s1.jsonl.deleted."+"1772600767")
	if _, err := os.Stat(want); err != nil {
		t.Errorf("archived file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, transcripttest.Namespace, "s1.jsonl")); !os.IsNotExist(err) {
		t.Errorf("live file still there: %v", err)
	}
	if err := st.Archive(context.Background(), transcripttest.Namespace, "never"); !errors.Is(err, transcript.ErrNotFound) {
		t.Errorf("archive of a never-created session: %v, want ErrNotFound", err)
	}
	if _, err := transcripttest.OpenStore(t, root).Resolve(transcripttest.Namespace, "k"); !errors.Is(err, transcript.ErrNotFound) {
		t.Errorf("archived session served after reopen: %v", err)
	}
}

func TestOpenFileLRUBounded(t *testing.T) {
	ctx := context.Background()
	m := store.NewMetrics(nil)
	st := transcripttest.OpenStore(t, t.TempDir(), store.WithMaxOpenFiles(2), store.WithMetrics(m))
	ids := []string{"a", "b", "c", "d", "e"}
	for _, id := range ids {
		transcripttest.CreateSession(t, st, id, "key-"+id)
	}
	for round := range 3 {
		for _, id := range ids {
			transcripttest.AppendN(t, st, id, 1+round, false)
			if n := testutil.ToFloat64(m.OpenFiles); n > 2 {
				t.Fatalf("%v files open, bound is 2", n)
			}
		}
	}
	for _, id := range ids {
		page, err := st.Read(ctx, transcripttest.Namespace, id, transcript.ReadOptions{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		// appendN reuses keys k1..kN, so rounds add only the new keys: 3 records in the end.
		if len(page.Messages) != 3 {
			t.Errorf("%s: %d records, want 3", id, len(page.Messages))
		}
	}
}

func TestInvalidNames(t *testing.T) {
	st := transcripttest.OpenStore(t, t.TempDir())
	for name, h := range map[string]transcript.SessionHeader{
		"dotdot id":    {Namespace: transcripttest.Namespace, SessionID: ".."},
		"slash id":     {Namespace: transcripttest.Namespace, SessionID: "a/b"},
		"empty ns":     {Namespace: "", SessionID: "x"},
		"hidden id":    {Namespace: transcripttest.Namespace, SessionID: ".x"},
		"dotdot in ns": {Namespace: "a..b", SessionID: "x"},
	} {
		if _, err := st.CreateSession(context.Background(), h); !errors.Is(err, transcript.ErrInvalid) {
			t.Errorf("%s: CreateSession = %v, want ErrInvalid", name, err)
		}
	}
}
