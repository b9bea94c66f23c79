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
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

// A compaction record is conversation, not a detail of how a turn ran: a page without
// tools keeps it, with its range, and the session's stats count it.
func TestCompactionRecords(t *testing.T) {
	ctx := context.Background()
	summary := transcripttest.TextMessage(transcript.RoleCompaction, "we agreed on Tuesday")
	summary.Compaction = &transcript.Compaction{FromSeq: 1, ToSeq: 2, TokensBefore: 900, TokensAfter: 100}
	for sname, mk := range stores {
		t.Run(sname, func(t *testing.T) {
			s := mk(t)
			transcripttest.CreateSession(t, s, "s1", "k")
			recs, err := s.Append(ctx, transcripttest.Namespace, "s1",
				transcript.AppendRequest{Message: transcripttest.TextMessage(transcript.RoleUser, "when?")},
				transcript.AppendRequest{Message: transcripttest.ToolResult("[]")},
				transcript.AppendRequest{IdempotencyKey: "turn/compaction", Message: summary},
				transcript.AppendRequest{Message: transcripttest.TextMessage(transcript.RoleAssistant, "Tuesday")})
			if err != nil {
				t.Fatal(err)
			}
			page, err := s.Read(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int64{1, 3, 4}, transcripttest.Seqs(page.Messages)); diff != "" {
				t.Errorf("page without tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(summary, page.Messages[1].Message); diff != "" {
				t.Errorf("compaction record (-want +got):\n%s", diff)
			}
			st, err := s.Stats(ctx, transcripttest.Namespace, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if st.Compactions != 1 || !st.LastCompactedAt.Equal(recs[2].TS) || st.Turns != 1 {
				t.Errorf("stats: %d compactions at %v, %d turns; want 1 at %v, 1", st.Compactions, st.LastCompactedAt, st.Turns, recs[2].TS)
			}
		})
	}
}
