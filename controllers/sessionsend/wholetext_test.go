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

package sessionsend

import (
	"context"
	"strings"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow/ownerflowtest"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// Status keeps 8 KiB of a long reply and says so; the ping-pong turn and the announce read
// the whole reply from the transcript.
func TestLongReplyIsWholeOutsideStatus(t *testing.T) {
	store := transcripttest.NewMemoryStore()
	long := ownerflowtest.LongText
	seq := ownerflowtest.Recorded(t, store, "sid-bob", "agent:bob:main", long)
	f := ownerflowtest.NewFixture(t, nil, send(fromAlice), ownerflowtest.Session("agent:bob:main", "bob"), ownerflowtest.Session("agent:alice:main", "alice"))
	f.Runner.Results["u1/round-1"] = turns.TurnResult{Text: long, ReplySeq: seq}
	r := sendReconciler(f)
	r.Transcripts = store
	reconcile := func() *sessionsv1alpha1.SessionSend {
		t.Helper()
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: sendKey}); err != nil {
			t.Fatal(err)
		}
		got := &sessionsv1alpha1.SessionSend{}
		if err := f.C.Get(context.Background(), sendKey, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := reconcile()
	if st := got.Status; len(st.Reply) > ownerflow.MaxStatusText || !st.ReplyTruncated || st.Turns[0].ReplySeq != seq {
		t.Errorf("status: reply of %d bytes, replyTruncated %v, turns[0].replySeq %d; want at most %d bytes, true, %d",
			len(st.Reply), st.ReplyTruncated, st.Turns[0].ReplySeq, ownerflow.MaxStatusText, seq)
	}
	if in := f.Runner.Inputs["u1/round-2"]; in != long {
		t.Errorf("the ping-pong turn's input is %d bytes, want the whole reply of %d", len(in), len(long))
	}
	f.Runner.Results["u1/round-2"] = turns.TurnResult{Text: sessionsv1alpha1.ReplySkip}
	reconcile()
	if in := f.Runner.Inputs["u1/announce"]; !strings.Contains(in, "Round 1 reply: "+long+"\n") {
		t.Errorf("the announce input does not hold the whole round-1 reply:\n%.200s", in)
	}
}
