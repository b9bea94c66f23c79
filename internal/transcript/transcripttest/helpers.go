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

package transcripttest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// Namespace is the namespace the helpers create sessions in.
const Namespace = "team-a"

// TextMessage is a message with one text block.
func TextMessage(role, text string) transcript.Message {
	return transcript.Message{Role: role, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}
}

// ToolResult is a sessions_list tool result with one text block.
func ToolResult(text string) transcript.Message {
	return transcript.Message{Role: transcript.RoleToolResult, ToolCallID: "call-1", ToolName: "sessions_list",
		Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}
}

// OpenStore opens a file store at root, closed when the test ends.
func OpenStore(t testing.TB, root string, opts ...store.Option) *store.FileStore {
	t.Helper()
	st, err := store.OpenFileStore(root, opts...)
	if err != nil {
		t.Fatalf("OpenFileStore: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// CreateSession creates session id with key in Namespace.
func CreateSession(t testing.TB, s transcript.Store, id, key string) {
	t.Helper()
	_, err := s.CreateSession(context.Background(), transcript.SessionHeader{
		Namespace: Namespace, SessionID: id, SessionKey: key, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
}

// AppendN appends n messages; every third is a tool result when withTools is set.
func AppendN(t testing.TB, s transcript.Store, id string, n int, withTools bool) {
	t.Helper()
	for i := 1; i <= n; i++ {
		m := TextMessage(transcript.RoleUser, fmt.Sprintf("message %d", i))
		if withTools && i%3 == 0 {
			m = ToolResult(fmt.Sprintf("tool %d", i))
		}
		if _, err := s.Append(context.Background(), Namespace, id, transcript.AppendRequest{IdempotencyKey: fmt.Sprintf("k%d", i), Message: m}); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
}

// Seqs lists the records' seqs.
func Seqs(recs []transcript.Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

// SeqRange is from, from+1, ..., to.
func SeqRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// MustTime parses an RFC 3339 time.
func MustTime(s string) time.Time {
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return ts
}
