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
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

// An archived transcript's history reads as a live one's did (pages, cursors), and a
// session never archived or live has no archived history.
func TestReadArchived(t *testing.T) {
	ctx := context.Background()
	st := transcripttest.OpenStore(t, t.TempDir())
	transcripttest.CreateSession(t, st, "s1", "agent:a:main")
	transcripttest.AppendN(t, st, "s1", 5, false)
	if _, err := st.ReadArchived(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{}); !errors.Is(err, transcript.ErrNotFound) {
		t.Errorf("ReadArchived of a live session: %v, want ErrNotFound", err)
	}
	if err := st.Archive(ctx, transcripttest.Namespace, "s1"); err != nil {
		t.Fatal(err)
	}
	page, err := st.ReadArchived(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: 2, IncludeTools: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(transcripttest.SeqRange(4, 5), transcripttest.Seqs(page.Messages)); diff != "" || !page.HasMore {
		t.Errorf("newest page (-want +got):\n%s hasMore %v", diff, page.HasMore)
	}
	older, err := st.ReadArchived(ctx, transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: 10, BeforeSeq: 4, IncludeTools: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(transcripttest.SeqRange(1, 3), transcripttest.Seqs(older.Messages)); diff != "" {
		t.Errorf("older page (-want +got):\n%s", diff)
	}
	if _, err := st.ReadArchived(ctx, transcripttest.Namespace, "nope", transcript.ReadOptions{}); !errors.Is(err, transcript.ErrNotFound) {
		t.Errorf("ReadArchived of an unknown session: %v, want ErrNotFound", err)
	}
	if _, err := st.ReadArchived(ctx, transcripttest.Namespace, "../x", transcript.ReadOptions{}); !errors.Is(err, transcript.ErrInvalid) {
		t.Errorf("ReadArchived of a bad id: %v, want ErrInvalid", err)
	}
}
