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
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecartest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// stores runs every conformance test against each Store implementation.
var stores = map[string]func(t *testing.T) transcript.Store{
	"memory": func(*testing.T) transcript.Store { return transcripttest.NewMemoryStore() },
	"file":   func(t *testing.T) transcript.Store { return transcripttest.OpenStore(t, t.TempDir()) },
	"client": func(t *testing.T) transcript.Store {
		return sidecartest.StartAPI(t, transcripttest.OpenStore(t, t.TempDir()))
	},
}

func TestIdempotency(t *testing.T) {
	ctx := context.Background()
	type step struct {
		key     string
		text    string
		wantSeq int64
	}
	cases := map[string][]step{
		"same key twice":           {{"a", "one", 1}, {"a", "one again", 1}},
		"different keys":           {{"a", "one", 1}, {"b", "two", 2}},
		"empty key never dedupes":  {{"", "one", 1}, {"", "one", 2}},
		"replay after others":      {{"a", "one", 1}, {"b", "two", 2}, {"c", "three", 3}, {"a", "x", 1}, {"d", "four", 4}},
		"replay of the latest one": {{"a", "one", 1}, {"b", "two", 2}, {"b", "two", 2}},
	}
	for sname, mk := range stores {
		for name, steps := range cases {
			t.Run(sname+"/"+name, func(t *testing.T) {
				s := mk(t)
				transcripttest.CreateSession(t, s, "s1", "agent:a:main")
				for i, st := range steps {
					recs, err := s.Append(ctx, transcripttest.Namespace, "s1", transcript.AppendRequest{IdempotencyKey: st.key, Message: transcripttest.TextMessage(transcript.RoleUser, st.text)})
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if recs[0].Seq != st.wantSeq {
						t.Errorf("step %d (key %q): seq %d, want %d", i, st.key, recs[0].Seq, st.wantSeq)
					}
				}
				page, err := s.Read(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				var maxSeq int64
				for _, st := range steps {
					maxSeq = max(maxSeq, st.wantSeq)
				}
				if got := int64(len(page.Messages)); got != maxSeq {
					t.Errorf("transcript holds %d records, want %d", got, maxSeq)
				}
			})
		}
	}
}

func TestBatchAppendWithDuplicateKeys(t *testing.T) {
	for sname, mk := range stores {
		t.Run(sname, func(t *testing.T) {
			s := mk(t)
			transcripttest.CreateSession(t, s, "s1", "k")
			recs, err := s.Append(context.Background(), transcripttest.Namespace, "s1", transcript.AppendRequest{IdempotencyKey: "x", Message: transcripttest.TextMessage(transcript.RoleUser, "1")}, transcript.AppendRequest{IdempotencyKey: "y", Message: transcripttest.TextMessage(transcript.RoleAssistant, "2")}, transcript.AppendRequest{IdempotencyKey: "x", Message: transcripttest.TextMessage(transcript.RoleUser, "dup")})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int64{1, 2, 1}, transcripttest.Seqs(recs)); diff != "" {
				t.Errorf("seqs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadPaging(t *testing.T) {
	ctx := context.Background()
	// 30 messages; every third (3, 6, ..., 30) is a tool result.
	cases := map[string]struct {
		opts     transcript.ReadOptions
		want     []int64
		wantMore bool
		wantNext string
	}{
		"tail without tools": {opts: transcript.ReadOptions{Limit: 4}, want: []int64{25, 26, 28, 29}, wantMore: true, wantNext: "seq:25"},
		"tail with tools":    {opts: transcript.ReadOptions{Limit: 4, IncludeTools: true}, want: []int64{27, 28, 29, 30}, wantMore: true, wantNext: "seq:27"},
		"before cursor":      {opts: transcript.ReadOptions{Limit: 3, BeforeSeq: 25}, want: []int64{20, 22, 23}, wantMore: true, wantNext: "seq:20"},
		"first page":         {opts: transcript.ReadOptions{Limit: 3, BeforeSeq: 4}, want: []int64{1, 2}, wantMore: false},
		"before first":       {opts: transcript.ReadOptions{Limit: 3, BeforeSeq: 1}, want: []int64{}, wantMore: false},
		"cursor beyond end":  {opts: transcript.ReadOptions{Limit: 2, BeforeSeq: 1000, IncludeTools: true}, want: []int64{29, 30}, wantMore: true, wantNext: "seq:29"},
		"all":                {opts: transcript.ReadOptions{Limit: 1000, IncludeTools: true}, want: transcripttest.SeqRange(1, 30)},
		"default limit":      {opts: transcript.ReadOptions{}, want: []int64{1, 2, 4, 5, 7, 8, 10, 11, 13, 14, 16, 17, 19, 20, 22, 23, 25, 26, 28, 29}},
		"after, all fit":     {opts: transcript.ReadOptions{Limit: 10, AfterSeq: 26, IncludeTools: true}, want: []int64{27, 28, 29, 30}},
		"after, more than the limit": {opts: transcript.ReadOptions{Limit: 2, AfterSeq: 25, IncludeTools: true},
			want: []int64{29, 30}, wantMore: true, wantNext: "seq:29"},
		"after without tools": {opts: transcript.ReadOptions{Limit: 10, AfterSeq: 24}, want: []int64{25, 26, 28, 29}},
		// Seq 24, between the floor and the page, is a tool result: nothing was left out.
		"after without tools, exactly the limit": {opts: transcript.ReadOptions{Limit: 4, AfterSeq: 23}, want: []int64{25, 26, 28, 29}},
		"after without tools, one left out":      {opts: transcript.ReadOptions{Limit: 3, AfterSeq: 23}, want: []int64{26, 28, 29}, wantMore: true, wantNext: "seq:26"},
		"after the end":                          {opts: transcript.ReadOptions{Limit: 10, AfterSeq: 30, IncludeTools: true}, want: []int64{}},
		"after and before":                       {opts: transcript.ReadOptions{Limit: 10, AfterSeq: 20, BeforeSeq: 25, IncludeTools: true}, want: []int64{21, 22, 23, 24}},
	}
	for sname, mk := range stores {
		s := mk(t)
		transcripttest.CreateSession(t, s, "s1", "k")
		transcripttest.AppendN(t, s, "s1", 30, true)
		for name, tc := range cases {
			t.Run(sname+"/"+name, func(t *testing.T) {
				page, err := s.Read(ctx, transcripttest.Namespace, "s1", tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, transcripttest.Seqs(page.Messages)); diff != "" {
					t.Errorf("seqs (-want +got):\n%s", diff)
				}
				if page.HasMore != tc.wantMore || page.NextCursor != tc.wantNext {
					t.Errorf("hasMore=%v next=%q, want %v %q", page.HasMore, page.NextCursor, tc.wantMore, tc.wantNext)
				}
			})
		}
	}
}

func TestStatsAndArchive(t *testing.T) {
	ctx := context.Background()
	for sname, mk := range stores {
		t.Run(sname, func(t *testing.T) {
			s := mk(t)
			transcripttest.CreateSession(t, s, "s1", "k")
			long := string(make([]rune, 0))
			for range 200 {
				long += "é"
			}
			_, err := s.Append(ctx, transcripttest.Namespace, "s1", transcript.AppendRequest{Message: transcripttest.TextMessage(transcript.RoleUser, "hello")}, transcript.AppendRequest{Message: transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: long}}, Usage: &transcript.Usage{Input: 10, Output: 20, TotalTokens: 30}}}, transcript.AppendRequest{Message: transcripttest.ToolResult("ignored for preview")})
			if err != nil {
				t.Fatal(err)
			}
			st, err := s.Stats(ctx, transcripttest.Namespace, "s1")
			if err != nil {
				t.Fatal(err)
			}
			st.UpdatedAt, st.Path = st.UpdatedAt.UTC().Round(0), ""
			want := transcript.Stats{MessageCount: 3, InputTokens: 10, OutputTokens: 20, TotalTokens: 30, Turns: 1, LastPreview: strings.Repeat("é", (transcript.PreviewLen-len(textutil.Marker))/2) + textutil.Marker}
			if diff := cmp.Diff(want, st, cmpIgnoreTime); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
			if err := s.Archive(ctx, transcripttest.Namespace, "s1"); err != nil {
				t.Fatal(err)
			}
			if err := s.Archive(ctx, transcripttest.Namespace, "s1"); err != nil {
				t.Errorf("second archive: %v", err)
			}
			for name, op := range map[string]func() error{
				"read": func() error {
					_, err := s.Read(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{})
					return err
				},
				"stats": func() error { _, err := s.Stats(ctx, transcripttest.Namespace, "s1"); return err },
				"append": func() error {
					_, err := s.Append(ctx, transcripttest.Namespace, "s1", transcript.AppendRequest{Message: transcripttest.TextMessage(transcript.RoleUser, "x")})
					return err
				},
			} {
				if err := op(); !errors.Is(err, transcript.ErrNotFound) {
					t.Errorf("%s after archive: %v, want ErrNotFound", name, err)
				}
			}
			if _, err := s.Read(ctx, transcripttest.Namespace, "nope", transcript.ReadOptions{}); !errors.Is(err, transcript.ErrNotFound) {
				t.Errorf("unknown session: %v, want ErrNotFound", err)
			}
		})
	}
}

var cmpIgnoreTime = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".UpdatedAt" }, cmp.Ignore())

func TestInvalidAppends(t *testing.T) {
	cases := map[string]transcript.AppendRequest{
		"unknown role":       {Message: transcript.Message{Role: "bot"}},
		"unknown block":      {Message: transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: "image"}}}},
		"invalid arguments":  {Message: transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.ContentBlock{{Type: transcript.BlockToolCall, Arguments: []byte("{nope")}}}},
		"empty role message": {Message: transcript.Message{}},
	}
	for sname, mk := range stores {
		s := mk(t)
		transcripttest.CreateSession(t, s, "s1", "k")
		for name, req := range cases {
			t.Run(sname+"/"+name, func(t *testing.T) {
				if _, err := s.Append(context.Background(), transcripttest.Namespace, "s1", req); !errors.Is(err, transcript.ErrInvalid) {
					t.Errorf("Append: %v, want ErrInvalid", err)
				}
			})
		}
	}
}

// TestConcurrentAppends checks group commit: many writers, dense unique seqs, each key once.
func TestConcurrentAppends(t *testing.T) {
	ctx := context.Background()
	st := transcripttest.OpenStore(t, t.TempDir())
	transcripttest.CreateSession(t, st, "s1", "k")
	const writers, each = 16, 25
	var wg sync.WaitGroup
	got := make(chan transcript.Record, writers*each*2)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				// Every key is sent twice, by two different writers.
				for _, k := range []string{fmt.Sprintf("w%d-%d", w, i), fmt.Sprintf("w%d-%d", (w+1)%writers, i)} {
					recs, err := st.Append(ctx, transcripttest.Namespace, "s1", transcript.AppendRequest{IdempotencyKey: k, Message: transcripttest.TextMessage(transcript.RoleUser, k)})
					if err != nil {
						t.Error(err)
						return
					}
					got <- recs[0]
				}
			}
		}()
	}
	wg.Wait()
	close(got)
	byKey := map[string]int64{}
	for r := range got {
		if prev, ok := byKey[r.IdempotencyKey]; ok && prev != r.Seq {
			t.Errorf("key %s got seqs %d and %d", r.IdempotencyKey, prev, r.Seq)
		}
		byKey[r.IdempotencyKey] = r.Seq
	}
	reopened := transcripttest.OpenStore(t, st.Root())
	page, err := reopened.Read(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: transcript.MaxLimit, IncludeTools: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(transcripttest.SeqRange(1, writers*each), transcripttest.Seqs(page.Messages)); diff != "" {
		t.Errorf("seqs on disk (-want +got):\n%s", diff)
	}
}

// The live listing pages a namespace's live sessionIds in order and leaves out archived
// ones and other namespaces'; the namespaces are those with a live transcript.
func TestLiveSessionIDs(t *testing.T) {
	ctx := context.Background()
	for sname, mk := range stores {
		t.Run(sname, func(t *testing.T) {
			s := mk(t)
			for _, h := range []transcript.SessionHeader{{Namespace: "a", SessionID: "s3"}, {Namespace: "a", SessionID: "s1"},
				{Namespace: "a", SessionID: "s4"}, {Namespace: "a", SessionID: "s2"}, {Namespace: "a", SessionID: "s5"},
				{Namespace: "b", SessionID: "s9"}, {Namespace: "c", SessionID: "s7"}} {
				h.SessionKey = "agent:x:" + h.SessionID
				if _, err := s.CreateSession(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			for _, ref := range [][2]string{{"a", "s4"}, {"c", "s7"}} {
				if err := s.Archive(ctx, ref[0], ref[1]); err != nil {
					t.Fatal(err)
				}
			}
			var pages [][]string
			for after := ""; ; {
				page, err := s.LiveSessionIDs(ctx, "a", after, 2)
				if err != nil {
					t.Fatal(err)
				}
				pages = append(pages, page)
				if len(page) < 2 {
					break
				}
				after = page[len(page)-1]
			}
			if diff := cmp.Diff([][]string{{"s1", "s2"}, {"s3", "s5"}, {}}, pages, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("pages of a (-want +got):\n%s", diff)
			}
			nss, err := s.LiveNamespaces(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"a", "b"}, nss); diff != "" {
				t.Errorf("namespaces (-want +got):\n%s", diff)
			}
			if _, err := s.LiveSessionIDs(ctx, "../x", "", 0); !errors.Is(err, transcript.ErrInvalid) {
				t.Errorf("an unsafe namespace: %v, want ErrInvalid", err)
			}
		})
	}
}
