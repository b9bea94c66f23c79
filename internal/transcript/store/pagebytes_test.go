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
	"strings"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

// A page is bounded by bytes as well as records: 12 records of 1 MiB come back a few at a
// time, and following the cursor still reads every one exactly once.
func TestReadIsBoundedInBytes(t *testing.T) {
	ctx := context.Background()
	st := transcripttest.OpenStore(t, t.TempDir())
	transcripttest.CreateSession(t, st, "s1", "agent:a:main")
	big := strings.Repeat("x", 1<<20)
	for i := 1; i <= 12; i++ {
		m := transcripttest.TextMessage(transcript.RoleUser, big)
		if _, err := st.Append(ctx, transcripttest.Namespace, "s1", transcript.AppendRequest{IdempotencyKey: fmt.Sprint(i), Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	var seen []int64
	opts := transcript.ReadOptions{Limit: transcript.MaxLimit}
	for pages := 0; ; pages++ {
		if pages > 12 {
			t.Fatal("paging does not end")
		}
		page, err := st.Read(ctx, transcripttest.Namespace, "s1", opts)
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for _, r := range page.Messages {
			size += len(r.Message.Content[0].Text)
		}
		if size > transcript.MaxPageBytes || len(page.Messages) == 0 {
			t.Fatalf("page of %d records and %d bytes, want 1 at least and %d bytes at most", len(page.Messages), size, transcript.MaxPageBytes)
		}
		seen = append(transcripttest.Seqs(page.Messages), seen...)
		if !page.HasMore {
			break
		}
		if opts.BeforeSeq, err = transcript.ParseCursor(page.NextCursor); err != nil {
			t.Fatal(err)
		}
	}
	if want := transcripttest.SeqRange(1, 12); fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("read %v, want %v", seen, want)
	}
}
