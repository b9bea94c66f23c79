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
	"errors"
	"github.com/agent-sessions/agent-session-operator/controllers/announce"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow/ownerflowtest"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// Unit tables for the step runner and the step functions: a fake client, a fake clock and
// a fake turn engine. The envtest suites run the same reconcilers against a real API server.

func sendReconciler(f *ownerflowtest.Fixture) *SessionSendReconciler {
	return (&SessionSendReconciler{OwnerDeps: f.Deps(), Announcer: announce.New(lookup.New(f.C, nil), nil, delivery.New(nil), nil, nil), TTL: time.Hour}).wire()
}

func send(mut ...func(*sessionsv1alpha1.SessionSend)) *sessionsv1alpha1.SessionSend {
	s := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "send", Namespace: "ns", UID: "u1", CreationTimestamp: metav1.NewTime(ownerflowtest.Epoch)},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:bob:main", Message: "ping", TimeoutSeconds: ptr.To[int32](30)}}
	for _, m := range mut {
		m(s)
	}
	return s
}

var sendKey = types.NamespacedName{Namespace: "ns", Name: "send"}

func reconcileSend(t *testing.T, f *ownerflowtest.Fixture) (ctrl.Result, *sessionsv1alpha1.SessionSend) {
	t.Helper()
	res, err := sendReconciler(f).Reconcile(context.Background(), ctrl.Request{NamespacedName: sendKey})
	if err != nil {
		t.Fatal(err)
	}
	got := &sessionsv1alpha1.SessionSend{}
	if err := f.C.Get(context.Background(), sendKey, got); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return res, got
}

func TestSessionSendSteps(t *testing.T) {
	ok := turns.TurnResult{Text: "pong"}
	cases := map[string]struct {
		send    *sessionsv1alpha1.SessionSend
		results map[string]turns.TurnResult
		advance time.Duration
		// want
		Phase     sessionsv1alpha1.SendPhase
		status    sessionsv1alpha1.SendStatus
		condition string
		submitted []string
		events    []string
		requeue   time.Duration
	}{
		"a timed send waits for round 1 and writes nothing": {
			send: send(), submitted: []string{"u1/round-1"}, requeue: 30 * time.Second,
		},
		"a fire-and-forget send is accepted at once": {
			send:  send(func(s *sessionsv1alpha1.SessionSend) { s.Spec.TimeoutSeconds = ptr.To[int32](0) }),
			Phase: sessionsv1alpha1.SendRunning, status: sessionsv1alpha1.SendAccepted, submitted: []string{"u1/round-1"}, events: []string{"Accepted"},
		},
		"a timed send times out at its deadline and goes on": {
			send: send(), advance: 31 * time.Second,
			Phase: sessionsv1alpha1.SendRunning, status: sessionsv1alpha1.SendTimeout, submitted: []string{"u1/round-1"}, events: []string{"Timeout"},
		},
		"a person's send: Completed with its round 1, no announce, no Event": {
			send: send(), results: map[string]turns.TurnResult{"u1/round-1": ok},
			Phase: sessionsv1alpha1.SendCompleted, status: sessionsv1alpha1.SendOK, condition: sessionsv1alpha1.ConditionCompleted,
		},
		"a session's send whose round 1 ends the ping-pong: the announce turn is next": {
			send: send(fromAlice), results: map[string]turns.TurnResult{"u1/round-1": {Text: sessionsv1alpha1.ReplySkip}},
			Phase: sessionsv1alpha1.SendAnnouncing, status: sessionsv1alpha1.SendOK, submitted: []string{"u1/announce"},
		},
		"every step of a session's send done: Completed; a skipped announce writes no Event": {
			send:    send(fromAlice),
			results: map[string]turns.TurnResult{"u1/round-1": {Text: sessionsv1alpha1.ReplySkip}, "u1/announce": {Text: sessionsv1alpha1.AnnounceSkip}},
			Phase:   sessionsv1alpha1.SendCompleted, status: sessionsv1alpha1.SendOK, condition: sessionsv1alpha1.ConditionCompleted,
		},
		"a failed round 1: Failed, and no Completed": {
			send: send(), results: map[string]turns.TurnResult{"u1/round-1": {Err: errors.New("model down")}},
			Phase: sessionsv1alpha1.SendFailed, status: sessionsv1alpha1.SendError, condition: sessionsv1alpha1.ConditionFailed, events: []string{"RunFailed"},
		},
		"a missing target fails with its name": {
			send:  send(func(s *sessionsv1alpha1.SessionSend) { s.Spec.SessionKey = "agent:nobody:group:x" }),
			Phase: sessionsv1alpha1.SendFailed, status: sessionsv1alpha1.SendError, condition: sessionsv1alpha1.ConditionFailed, events: []string{"Failed"},
		},
		"spec.cancel: Cancelled, the turns aborted, nothing submitted": {
			send:  send(func(s *sessionsv1alpha1.SessionSend) { s.Spec.Cancel = true }),
			Phase: sessionsv1alpha1.SendCancelled, status: sessionsv1alpha1.SendError, condition: sessionsv1alpha1.ConditionCancelled,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := ownerflowtest.NewFixture(t, nil, tc.send, ownerflowtest.Session("agent:bob:main", "bob"))
			for k, v := range tc.results {
				f.Runner.Results[k] = v
			}
			f.Clock.Step(tc.advance)
			res, got := reconcileSend(t, f)
			if got.Status.Phase != tc.Phase || got.Status.Status != tc.status {
				t.Errorf("phase, status = %q, %q; want %q, %q (error %q)", got.Status.Phase, got.Status.Status, tc.Phase, tc.status, got.Status.Error)
			}
			for _, typ := range []string{sessionsv1alpha1.ConditionCompleted, sessionsv1alpha1.ConditionFailed, sessionsv1alpha1.ConditionCancelled} {
				if set := meta.IsStatusConditionTrue(got.Status.Conditions, typ); set != (typ == tc.condition) {
					t.Errorf("condition %s = %v", typ, set)
				}
			}
			if diff := cmp.Diff(tc.submitted, f.Runner.Submitted); diff != "" {
				t.Errorf("submitted turns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.events, f.Events.Reasons); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if res.RequeueAfter != tc.requeue {
				t.Errorf("requeue after %s, want %s", res.RequeueAfter, tc.requeue)
			}
		})
	}
}

// A timed send cancelled while its round 1 runs (nothing written yet: ok would arrive with
// the reply) keeps its run id, the id its A2A task is known by, until its TTL.
func TestCancelledTimedSendKeepsItsRunID(t *testing.T) {
	f := ownerflowtest.NewFixture(t, nil, send(), ownerflowtest.Session("agent:bob:main", "bob"))
	if _, got := reconcileSend(t, f); got.Status.RunID != "" || got.Status.Phase != "" {
		t.Fatalf("before the cancel: runId %q, phase %q; want nothing written", got.Status.RunID, got.Status.Phase)
	}
	cur := &sessionsv1alpha1.SessionSend{}
	if err := f.C.Get(context.Background(), sendKey, cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.Cancel = true
	if err := f.C.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	_, got := reconcileSend(t, f)
	if got.Status.Phase != sessionsv1alpha1.SendCancelled || got.Status.RunID != "u1/round-1" {
		t.Errorf("phase %q, runId %q; want %q, %q", got.Status.Phase, got.Status.RunID, sessionsv1alpha1.SendCancelled, "u1/round-1")
	}
}

// A send past admission (the webhook off) that names main without a requester fails with
// lookup's one text, the one the webhook gives.
func TestMainWithoutRequesterFailsWithLookupsText(t *testing.T) {
	f := ownerflowtest.NewFixture(t, nil, send(func(s *sessionsv1alpha1.SessionSend) { s.Spec.SessionKey = "main" }), ownerflowtest.Session("agent:bob:main", "bob"))
	_, got := reconcileSend(t, f)
	if got.Status.Phase != sessionsv1alpha1.SendFailed || got.Status.Error != lookup.ErrMainWithoutRequester.Error() {
		t.Errorf("phase %q, error %q; want %q, %q", got.Status.Phase, got.Status.Error, sessionsv1alpha1.SendFailed, lookup.ErrMainWithoutRequester)
	}
}

// A status write refused as stale emits no Event and is requeued without an error (the
// controller's wrapper, requeueConflicts): the next reconcile queues the Events again.
func TestEventsOnlyAfterTheWriteLands(t *testing.T) {
	conflict := &interceptor.Funcs{SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
		return apierrors.NewConflict(schema.GroupResource{Resource: "sessionsends"}, "send", errors.New("stale"))
	}}
	f := ownerflowtest.NewFixture(t, conflict, send(func(s *sessionsv1alpha1.SessionSend) { s.Spec.TimeoutSeconds = ptr.To[int32](0) }), ownerflowtest.Session("agent:bob:main", "bob"))
	res, err := ownerflow.RequeueConflicts(sendReconciler(f)).Reconcile(context.Background(), ctrl.Request{NamespacedName: sendKey})
	if err != nil {
		t.Fatalf("a refused status write: err %v, want a quiet requeue", err)
	}
	got := &sessionsv1alpha1.SessionSend{}
	if err := f.C.Get(context.Background(), sendKey, got); err != nil {
		t.Fatal(err)
	}
	if len(f.Events.Reasons) != 0 {
		t.Errorf("events = %v, want none before a write lands", f.Events.Reasons)
	}
	if got.Status.Status != "" || res.RequeueAfter == 0 {
		t.Errorf("status %q, requeue %s: want nothing written and a retry", got.Status.Status, res.RequeueAfter)
	}
}

// A deleted send aborts its turns; a finished one is released and deleted after its TTL.
func TestSendReleaseAndTTL(t *testing.T) {
	owner := turns.Owner{Kind: turns.OwnerSessionSend, NamespacedName: sendKey}
	f := ownerflowtest.NewFixture(t, nil)
	if _, got := reconcileSend(t, f); got.Name != "" {
		t.Fatal("found a send")
	}
	if diff := cmp.Diff([]turns.Owner{owner}, f.Runner.Aborted); diff != "" {
		t.Errorf("aborted owners of a send gone (-want +got):\n%s", diff)
	}

	done := metav1.NewTime(ownerflowtest.Epoch)
	finished := send(func(s *sessionsv1alpha1.SessionSend) {
		s.Status = sessionsv1alpha1.SessionSendStatus{Phase: sessionsv1alpha1.SendCompleted, OwnerStatus: sessionsv1alpha1.OwnerStatus{CompletedAt: &done}}
		s.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
	})
	f = ownerflowtest.NewFixture(t, nil, finished)
	f.Clock.Step(20 * time.Second)
	if res, got := reconcileSend(t, f); res.RequeueAfter != 40*time.Second || got.Name == "" {
		t.Errorf("before the TTL: requeue %s, present %v; want 40s, true", res.RequeueAfter, got.Name != "")
	}
	f.Clock.Step(40 * time.Second)
	if _, got := reconcileSend(t, f); got.Name != "" {
		t.Error("the send outlived its TTL")
	}
	if len(f.Runner.Aborted) != 2 {
		t.Errorf("a finished send was released %d times, want on each reconcile (2)", len(f.Runner.Aborted))
	}
}

// A reply-back turn runs only where a send could: with sends into the requester's session
// denied, the exchange ends with a skipped turn naming the rule and the announce is next.
func TestReplyBackStopsWhereTheSendPolicyDenies(t *testing.T) {
	pol := &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"},
		Spec: sessionsv1alpha1.SessionPolicySpec{SendPolicy: sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{
			{Match: sessionsv1alpha1.SendRuleMatch{KeyPrefix: "agent:alice:"}, Action: sessionsv1alpha1.ActionDeny}}}}}
	f := ownerflowtest.NewFixture(t, nil, send(fromAlice),
		ownerflowtest.Session("agent:bob:main", "bob"), ownerflowtest.Session("agent:alice:main", "alice"), pol)
	f.Runner.Results["u1/round-1"] = turns.TurnResult{Text: "hi alice"}
	_, got := reconcileSend(t, f)
	if diff := cmp.Diff([]string{"u1/announce"}, f.Runner.Submitted); diff != "" {
		t.Errorf("submitted turns (-want +got):\n%s", diff)
	}
	if n := len(got.Status.Turns); n != 2 {
		t.Fatalf("turns = %+v, want round 1 and the refused reply-back turn", got.Status.Turns)
	}
	if turn := got.Status.Turns[1]; !turn.Skipped || turn.Session != "agent:alice:main" || !strings.Contains(turn.Error, "reply-back stopped") {
		t.Errorf("reply-back turn = %+v, want skipped in agent:alice:main with the policy's reason", turn)
	}
}

func fromAlice(s *sessionsv1alpha1.SessionSend) { s.Spec.FromSessionKey = "agent:alice:main" }
