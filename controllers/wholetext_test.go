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

package controllers

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// longText is a reply well past status's 8 KiB, with its end where a cut would lose it.
var longText = strings.Repeat("a", 3*maxStatusText) + "THE-END"

// recorded appends text to a session's transcript as the engine would, and returns its seq.
func recorded(t *testing.T, store transcript.Store, sessionID, key, text string) int64 {
	t.Helper()
	if _, err := store.CreateSession(context.Background(), transcript.SessionHeader{Namespace: "ns", SessionID: sessionID, SessionKey: key}); err != nil {
		t.Fatal(err)
	}
	recs, err := store.Append(context.Background(), "ns", sessionID, transcript.AppendRequest{Message: transcripttest.TextMessage(transcript.RoleAssistant, text)})
	if err != nil {
		t.Fatal(err)
	}
	return recs[0].Seq
}

// Status keeps 8 KiB of a long reply and says so; the ping-pong turn and the announce read
// the whole reply from the transcript.
func TestLongReplyIsWholeOutsideStatus(t *testing.T) {
	store := transcripttest.NewMemoryStore()
	seq := recorded(t, store, "sid-bob", "agent:bob:main", longText)
	f := newFixture(t, nil, send(fromAlice), session("agent:bob:main", "bob"), session("agent:alice:main", "alice"))
	f.runner.results["u1/round-1"] = turns.TurnResult{Text: longText, ReplySeq: seq}
	r := f.sends()
	r.Transcripts = store
	reconcile := func() *sessionsv1alpha1.SessionSend {
		t.Helper()
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: sendKey}); err != nil {
			t.Fatal(err)
		}
		got := &sessionsv1alpha1.SessionSend{}
		if err := f.c.Get(context.Background(), sendKey, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := reconcile()
	if st := got.Status; len(st.Reply) > maxStatusText || !st.ReplyTruncated || st.Turns[0].ReplySeq != seq {
		t.Errorf("status: reply of %d bytes, replyTruncated %v, turns[0].replySeq %d; want at most %d bytes, true, %d",
			len(st.Reply), st.ReplyTruncated, st.Turns[0].ReplySeq, maxStatusText, seq)
	}
	if in := f.runner.inputs["u1/round-2"]; in != longText {
		t.Errorf("the ping-pong turn's input is %d bytes, want the whole reply of %d", len(in), len(longText))
	}
	f.runner.results["u1/round-2"] = turns.TurnResult{Text: sessionsv1alpha1.ReplySkip}
	reconcile()
	if in := f.runner.inputs["u1/announce"]; !strings.Contains(in, "Round 1 reply: "+longText+"\n") {
		t.Errorf("the announce input does not hold the whole round-1 reply:\n%.200s", in)
	}
}

// A sub-agent's long result is kept as 8 KiB in status with its seq, and announced whole.
func TestLongSubagentResultIsAnnouncedWhole(t *testing.T) {
	store := transcripttest.NewMemoryStore()
	childKey := "agent:research:subagent:r1"
	seq := recorded(t, store, "sid-research", childKey, longText)
	child := session(childKey, "research")
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: "SubagentRun",
		Name: "run", UID: "r1", Controller: ptr.To(true)}}
	requester := session("agent:main:main", "main")
	running := func(r *sessionsv1alpha1.SubagentRun) {
		r.Spec.RequesterSessionKey = requester.Spec.Key
		r.Status = sessionsv1alpha1.SubagentRunStatus{Status: "accepted", Phase: sessionsv1alpha1.RunRunning, ChildSessionKey: childKey,
			OwnerStatus: sessionsv1alpha1.OwnerStatus{StartedAt: ptr.To(metav1.NewTime(epoch))}}
	}
	f := newFixture(t, nil, run(running), child, requester)
	f.runner.results["r1/task"] = turns.TurnResult{Text: longText, ReplySeq: seq}
	runKey := types.NamespacedName{Namespace: "ns", Name: "run"}
	r := f.runs()
	r.Transcripts = store
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: runKey}); err != nil {
		t.Fatal(err)
	}
	got := &sessionsv1alpha1.SubagentRun{}
	if err := f.c.Get(context.Background(), runKey, got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Result) > maxStatusText || got.Status.ResultSeq != seq {
		t.Errorf("status: result of %d bytes, resultSeq %d; want at most %d bytes and %d", len(got.Status.Result), got.Status.ResultSeq, maxStatusText, seq)
	}
	if in := f.runner.inputs["r1/announce"]; !strings.Contains(in, "Result: "+longText+"\n") {
		t.Errorf("the announce input does not hold the whole result:\n%.200s", in)
	}
}

// The whole-reply bound is a model answer's own cap: a reply any provider returns comes
// back whole.
func TestWholeReplyBoundIsTheModelOutputCap(t *testing.T) {
	if transcript.MaxReplyBytes != provider.MaxOutputText {
		t.Errorf("transcript.MaxReplyBytes = %d, provider.MaxOutputText = %d", transcript.MaxReplyBytes, provider.MaxOutputText)
	}
}
