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

package subagentrun

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow/ownerflowtest"
	"github.com/agent-sessions/agent-session-operator/internal/protocol"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

var runKey = types.NamespacedName{Namespace: "ns", Name: "run"}

// runningIn is a run accepted into its child childKey, requested by agent:main:main.
func runningIn(childKey string) func(*sessionsv1alpha1.SubagentRun) {
	return func(r *sessionsv1alpha1.SubagentRun) {
		r.Spec.RequesterSessionKey = "agent:main:main"
		r.Status = sessionsv1alpha1.SubagentRunStatus{Status: "accepted", Phase: sessionsv1alpha1.RunRunning, ChildSessionKey: childKey,
			OwnerStatus: sessionsv1alpha1.OwnerStatus{StartedAt: ptr.To(metav1.NewTime(ownerflowtest.Epoch))}}
	}
}

// childOfRun is the run's child session, the run its controller.
func childOfRun(key string) *sessionsv1alpha1.AgentSession {
	child := ownerflowtest.Session(key, "research")
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: "SubagentRun",
		Name: "run", UID: "r1", Controller: ptr.To(true)}}
	return child
}

// A sub-agent's long result is kept as 8 KiB in status with its seq, and announced whole.
func TestLongSubagentResultIsAnnouncedWhole(t *testing.T) {
	store := transcripttest.NewMemoryStore()
	childKey := "agent:research:subagent:r1"
	long := ownerflowtest.LongText
	seq := ownerflowtest.Recorded(t, store, "sid-research", childKey, long)
	f := ownerflowtest.NewFixture(t, nil, run(runningIn(childKey)), childOfRun(childKey), ownerflowtest.Session("agent:main:main", "main"))
	f.Runner.Results["r1/task"] = turns.TurnResult{Text: long, ReplySeq: seq}
	r := runReconciler(f)
	r.Transcripts = store
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: runKey}); err != nil {
		t.Fatal(err)
	}
	got := &sessionsv1alpha1.SubagentRun{}
	if err := f.C.Get(context.Background(), runKey, got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Result) > ownerflow.MaxStatusText || got.Status.ResultSeq != seq {
		t.Errorf("status: result of %d bytes, resultSeq %d; want at most %d bytes and %d", len(got.Status.Result), got.Status.ResultSeq, ownerflow.MaxStatusText, seq)
	}
	if in := f.Runner.Inputs["r1/announce"]; !strings.Contains(in, "Result: "+long+"\n") {
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

// A sub-agent is told the session tools its Agent's subagents.tools grants it, by name, and
// that it has none when nothing grants them.
func TestSubagentIsToldItsSessionTools(t *testing.T) {
	cases := map[string]struct {
		grant []string
		told  []string
	}{
		"nothing granted":              {},
		"history and send granted":     {grant: []string{"sessions_send", "mcp__everything__echo", "sessions_history"}, told: []string{"sessions_history", "sessions_send"}},
		"spawn is never a sub-agent's": {grant: []string{"sessions_spawn"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			childKey := "agent:research:subagent:r1"
			agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: "ns"},
				Spec: sessionsv1alpha1.AgentSpec{Subagents: sessionsv1alpha1.SubagentsSpec{Tools: tc.grant}}}
			f := ownerflowtest.NewFixture(t, nil, run(runningIn(childKey)), agent, childOfRun(childKey), ownerflowtest.Session("agent:main:main", "main"))
			if _, err := runReconciler(f).Reconcile(context.Background(), ctrl.Request{NamespacedName: runKey}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(protocol.SubagentTask("agent:main:main", "", tc.told), f.Runner.Systems["r1/task"]); diff != "" {
				t.Errorf("the task's context (-want +got):\n%s", diff)
			}
		})
	}
}
