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
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// Unit tables for the step runner and the step functions: a fake client, a fake clock and
// a fake turn engine. The envtest suites run the same reconcilers against a real API server.

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeRunner is a turn engine whose turns end when a test says so.
type fakeRunner struct {
	results   map[string]turns.TurnResult
	submitted []string
	// inputs and systems are the submitted turns' input texts and system contexts, by turn id.
	inputs, systems map[string]string
	aborted         []turns.Owner
	// reports are the sessions' reports; written, the seqs acknowledged.
	reports map[types.NamespacedName]turns.SessionReport
	written []uint64
}

func (f *fakeRunner) Submit(_ context.Context, req turns.TurnRequest) error {
	f.submitted = append(f.submitted, req.ID)
	if f.inputs == nil {
		f.inputs, f.systems = map[string]string{}, map[string]string{}
	}
	f.inputs[req.ID], f.systems[req.ID] = transcript.MessageText(&req.Input), req.SystemContext
	return nil
}
func (f *fakeRunner) Result(_ turns.Owner, id string) (turns.TurnResult, bool) {
	r, ok := f.results[id]
	return r, ok
}
func (f *fakeRunner) Abort(o turns.Owner) int {
	f.aborted = append(f.aborted, o)
	return 0
}
func (f *fakeRunner) Wake(string) <-chan event.GenericEvent { return nil }
func (f *fakeRunner) SessionReport(key types.NamespacedName) (turns.SessionReport, bool) {
	r, ok := f.reports[key]
	return r, ok
}
func (f *fakeRunner) ReportWritten(_ types.NamespacedName, seq uint64) {
	f.written = append(f.written, seq)
}

// fakeRecorder keeps the reasons of the Events it is given.
type fakeRecorder struct{ reasons []string }

func (r *fakeRecorder) Eventf(_, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	r.reasons = append(r.reasons, reason)
}

func (r *fakeRecorder) AnnotatedEventf(_, _ runtime.Object, _ map[string]string, _, reason, _, _ string, _ ...any) {
	r.reasons = append(r.reasons, reason)
}

type fixture struct {
	c      client.Client
	clock  *clocktesting.FakeClock
	runner *fakeRunner
	events *fakeRecorder
}

func newFixture(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) *fixture {
	t.Helper()
	objs = withAgents(objs)
	c := testenv.IndexFake(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).
		WithStatusSubresource(&sessionsv1alpha1.SessionSend{}, &sessionsv1alpha1.SubagentRun{}, &sessionsv1alpha1.AgentSession{})).Build()
	if funcs != nil {
		c = interceptor.NewClient(c, *funcs)
	}
	return &fixture{c: c, clock: clocktesting.NewFakeClock(epoch), runner: &fakeRunner{results: map[string]turns.TurnResult{}}, events: &fakeRecorder{}}
}

// deps wires a reconciler of turn owners to the fixture's fakes.
func (f *fixture) deps() ownerDeps {
	l := lookup.New(f.c, nil)
	return ownerDeps{Client: f.c, Lookup: l, Runner: f.runner, Clock: f.clock, Recorder: f.events,
		Announcer: &announcer{lookup: l, deliverer: delivery.New(nil)}}
}

func (f *fixture) sends() *SessionSendReconciler {
	return (&SessionSendReconciler{ownerDeps: f.deps(), TTL: time.Hour}).wire()
}

func (f *fixture) runs() *SubagentRunReconciler {
	return (&SubagentRunReconciler{ownerDeps: f.deps(), TTL: time.Hour}).wire()
}

// withAgents adds the Agent of each session that names one not among objs: a turn request
// carries its session's Agent.
func withAgents(objs []client.Object) []client.Object {
	have := map[string]bool{}
	for _, o := range objs {
		if a, ok := o.(*sessionsv1alpha1.Agent); ok {
			have[a.Name] = true
		}
	}
	for _, o := range objs {
		if s, ok := o.(*sessionsv1alpha1.AgentSession); ok && !have[s.Spec.AgentID] {
			have[s.Spec.AgentID] = true
			objs = append(objs, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: s.Spec.AgentID, Namespace: s.Namespace}})
		}
	}
	return objs
}

func session(key, agent string) *sessionsv1alpha1.AgentSession {
	return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s-" + agent, Namespace: "ns"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agent}, Status: sessionsv1alpha1.AgentSessionStatus{SessionID: "sid-" + agent}}
}

func send(mut ...func(*sessionsv1alpha1.SessionSend)) *sessionsv1alpha1.SessionSend {
	s := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "send", Namespace: "ns", UID: "u1", CreationTimestamp: metav1.NewTime(epoch)},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:bob:main", Message: "ping", TimeoutSeconds: ptr.To[int32](30)}}
	for _, m := range mut {
		m(s)
	}
	return s
}

var sendKey = types.NamespacedName{Namespace: "ns", Name: "send"}

func reconcileSend(t *testing.T, f *fixture) (ctrl.Result, *sessionsv1alpha1.SessionSend) {
	t.Helper()
	res, err := f.sends().Reconcile(context.Background(), ctrl.Request{NamespacedName: sendKey})
	if err != nil {
		t.Fatal(err)
	}
	got := &sessionsv1alpha1.SessionSend{}
	if err := f.c.Get(context.Background(), sendKey, got); err != nil && !apierrors.IsNotFound(err) {
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
		phase     sessionsv1alpha1.SendPhase
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
			phase: sessionsv1alpha1.SendRunning, status: sessionsv1alpha1.SendAccepted, submitted: []string{"u1/round-1"}, events: []string{"Accepted"},
		},
		"a timed send times out at its deadline and goes on": {
			send: send(), advance: 31 * time.Second,
			phase: sessionsv1alpha1.SendRunning, status: sessionsv1alpha1.SendTimeout, submitted: []string{"u1/round-1"}, events: []string{"Timeout"},
		},
		"a person's send: Completed with its round 1, no announce, no Event": {
			send: send(), results: map[string]turns.TurnResult{"u1/round-1": ok},
			phase: sessionsv1alpha1.SendCompleted, status: sessionsv1alpha1.SendOK, condition: sessionsv1alpha1.ConditionCompleted,
		},
		"a session's send whose round 1 ends the ping-pong: the announce turn is next": {
			send: send(fromAlice), results: map[string]turns.TurnResult{"u1/round-1": {Text: sessionsv1alpha1.ReplySkip}},
			phase: sessionsv1alpha1.SendAnnouncing, status: sessionsv1alpha1.SendOK, submitted: []string{"u1/announce"},
		},
		"every step of a session's send done: Completed; a skipped announce writes no Event": {
			send:    send(fromAlice),
			results: map[string]turns.TurnResult{"u1/round-1": {Text: sessionsv1alpha1.ReplySkip}, "u1/announce": {Text: sessionsv1alpha1.AnnounceSkip}},
			phase:   sessionsv1alpha1.SendCompleted, status: sessionsv1alpha1.SendOK, condition: sessionsv1alpha1.ConditionCompleted,
		},
		"a failed round 1: Failed, and no Completed": {
			send: send(), results: map[string]turns.TurnResult{"u1/round-1": {Err: errors.New("model down")}},
			phase: sessionsv1alpha1.SendFailed, status: sessionsv1alpha1.SendError, condition: sessionsv1alpha1.ConditionFailed, events: []string{"RunFailed"},
		},
		"a missing target fails with its name": {
			send:  send(func(s *sessionsv1alpha1.SessionSend) { s.Spec.SessionKey = "agent:nobody:group:x" }),
			phase: sessionsv1alpha1.SendFailed, status: sessionsv1alpha1.SendError, condition: sessionsv1alpha1.ConditionFailed, events: []string{"Failed"},
		},
		"spec.cancel: Cancelled, the turns aborted, nothing submitted": {
			send:  send(func(s *sessionsv1alpha1.SessionSend) { s.Spec.Cancel = true }),
			phase: sessionsv1alpha1.SendCancelled, status: sessionsv1alpha1.SendError, condition: sessionsv1alpha1.ConditionCancelled,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil, tc.send, session("agent:bob:main", "bob"))
			for k, v := range tc.results {
				f.runner.results[k] = v
			}
			f.clock.Step(tc.advance)
			res, got := reconcileSend(t, f)
			if got.Status.Phase != tc.phase || got.Status.Status != tc.status {
				t.Errorf("phase, status = %q, %q; want %q, %q (error %q)", got.Status.Phase, got.Status.Status, tc.phase, tc.status, got.Status.Error)
			}
			for _, typ := range []string{sessionsv1alpha1.ConditionCompleted, sessionsv1alpha1.ConditionFailed, sessionsv1alpha1.ConditionCancelled} {
				if set := meta.IsStatusConditionTrue(got.Status.Conditions, typ); set != (typ == tc.condition) {
					t.Errorf("condition %s = %v", typ, set)
				}
			}
			if diff := cmp.Diff(tc.submitted, f.runner.submitted); diff != "" {
				t.Errorf("submitted turns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.events, f.events.reasons); diff != "" {
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
	f := newFixture(t, nil, send(), session("agent:bob:main", "bob"))
	if _, got := reconcileSend(t, f); got.Status.RunID != "" || got.Status.Phase != "" {
		t.Fatalf("before the cancel: runId %q, phase %q; want nothing written", got.Status.RunID, got.Status.Phase)
	}
	cur := &sessionsv1alpha1.SessionSend{}
	if err := f.c.Get(context.Background(), sendKey, cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.Cancel = true
	if err := f.c.Update(context.Background(), cur); err != nil {
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
	f := newFixture(t, nil, send(func(s *sessionsv1alpha1.SessionSend) { s.Spec.SessionKey = "main" }), session("agent:bob:main", "bob"))
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
	f := newFixture(t, conflict, send(func(s *sessionsv1alpha1.SessionSend) { s.Spec.TimeoutSeconds = ptr.To[int32](0) }), session("agent:bob:main", "bob"))
	res, err := requeueConflicts(f.sends()).Reconcile(context.Background(), ctrl.Request{NamespacedName: sendKey})
	if err != nil {
		t.Fatalf("a refused status write: err %v, want a quiet requeue", err)
	}
	got := &sessionsv1alpha1.SessionSend{}
	if err := f.c.Get(context.Background(), sendKey, got); err != nil {
		t.Fatal(err)
	}
	if len(f.events.reasons) != 0 {
		t.Errorf("events = %v, want none before a write lands", f.events.reasons)
	}
	if got.Status.Status != "" || res.RequeueAfter == 0 {
		t.Errorf("status %q, requeue %s: want nothing written and a retry", got.Status.Status, res.RequeueAfter)
	}
}

// A deleted send aborts its turns; a finished one is released and deleted after its TTL.
func TestSendReleaseAndTTL(t *testing.T) {
	owner := turns.Owner{Kind: turns.OwnerSessionSend, NamespacedName: sendKey}
	f := newFixture(t, nil)
	if _, got := reconcileSend(t, f); got.Name != "" {
		t.Fatal("found a send")
	}
	if diff := cmp.Diff([]turns.Owner{owner}, f.runner.aborted); diff != "" {
		t.Errorf("aborted owners of a send gone (-want +got):\n%s", diff)
	}

	done := metav1.NewTime(epoch)
	finished := send(func(s *sessionsv1alpha1.SessionSend) {
		s.Status = sessionsv1alpha1.SessionSendStatus{Phase: sessionsv1alpha1.SendCompleted, OwnerStatus: sessionsv1alpha1.OwnerStatus{CompletedAt: &done}}
		s.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
	})
	f = newFixture(t, nil, finished)
	f.clock.Step(20 * time.Second)
	if res, got := reconcileSend(t, f); res.RequeueAfter != 40*time.Second || got.Name == "" {
		t.Errorf("before the TTL: requeue %s, present %v; want 40s, true", res.RequeueAfter, got.Name != "")
	}
	f.clock.Step(40 * time.Second)
	if _, got := reconcileSend(t, f); got.Name != "" {
		t.Error("the send outlived its TTL")
	}
	if len(f.runner.aborted) != 2 {
		t.Errorf("a finished send was released %d times, want on each reconcile (2)", len(f.runner.aborted))
	}
}

func TestTTLLeft(t *testing.T) {
	at := func(d time.Duration) *metav1.Time { m := metav1.NewTime(epoch.Add(d)); return &m }
	now := epoch.Add(time.Minute)
	cases := map[string]struct {
		spec      *int32
		def       time.Duration
		finished  *metav1.Time
		notBefore *metav1.Time
		wantLeft  time.Duration
		wantKeep  bool
	}{
		"spec wins over the default":             {spec: ptr.To[int32](120), def: time.Hour, finished: at(0), wantLeft: time.Minute},
		"the default applies when spec is unset": {def: 2 * time.Minute, finished: at(0), wantLeft: time.Minute},
		"no default keeps it":                    {finished: at(0), wantKeep: true},
		"spec 0 deletes at once":                 {spec: ptr.To[int32](0), finished: at(0)},
		"not before the child's archive":         {spec: ptr.To[int32](0), finished: at(0), notBefore: at(time.Hour), wantLeft: 59 * time.Minute},
		"not finished":                           {spec: ptr.To[int32](0), wantKeep: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			left, keep := ttlLeft(tc.spec, tc.def, tc.finished, tc.notBefore, now)
			if left != tc.wantLeft || keep != tc.wantKeep {
				t.Errorf("ttlLeft = %s, %v; want %s, %v", left, keep, tc.wantLeft, tc.wantKeep)
			}
		})
	}
}

func TestArchiveDue(t *testing.T) {
	s := func(v string) *sessionsv1alpha1.AgentSession {
		return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{sessionsv1alpha1.ArchiveAtAnnotation: v}}}
	}
	cases := map[string]struct {
		s        *sessionsv1alpha1.AgentSession
		wantDue  bool
		wantLeft time.Duration
	}{
		"none":        {s: &sessionsv1alpha1.AgentSession{}},
		"not yet":     {s: s(epoch.Add(time.Hour).Format(time.RFC3339)), wantLeft: time.Hour},
		"due":         {s: s(epoch.Format(time.RFC3339)), wantDue: true},
		"unparseable": {s: s("soon")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			due, left := archiveDue(tc.s, epoch)
			if due != tc.wantDue || left != tc.wantLeft {
				t.Errorf("archiveDue = %v, %s; want %v, %s", due, left, tc.wantDue, tc.wantLeft)
			}
		})
	}
}

func run(mut ...func(*sessionsv1alpha1.SubagentRun)) *sessionsv1alpha1.SubagentRun {
	r := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Name: "run", Namespace: "ns", UID: "r1"},
		Spec: sessionsv1alpha1.SubagentRunSpec{Task: "look", AgentID: "research"}}
	for _, m := range mut {
		m(r)
	}
	return r
}

func TestSubagentRunSteps(t *testing.T) {
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: "ns"}}
	childKey := "agent:research:subagent:r1"
	child := session(childKey, "research")
	// The run created its child: it is the child's controller.
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: "SubagentRun",
		Name: "run", UID: "r1", Controller: ptr.To(true)}}
	running := func(r *sessionsv1alpha1.SubagentRun) {
		now := metav1.NewTime(epoch)
		r.Status = sessionsv1alpha1.SubagentRunStatus{Status: "accepted", Phase: sessionsv1alpha1.RunRunning, ChildSessionKey: childKey, OwnerStatus: sessionsv1alpha1.OwnerStatus{StartedAt: &now}}
	}
	cases := map[string]struct {
		objs      []client.Object
		results   map[string]turns.TurnResult
		phase     sessionsv1alpha1.RunPhase
		condition string
		notes     string
		submitted []string
	}{
		"the child is made first": {objs: []client.Object{run(), agent}},
		"accepted, then the task runs": {
			objs: []client.Object{run(), agent, child}, phase: sessionsv1alpha1.RunRunning, submitted: []string{"r1/task"},
		},
		"a missing agent fails": {objs: []client.Object{run()}, phase: sessionsv1alpha1.RunFailed, condition: sessionsv1alpha1.ConditionFailed, notes: `agent "research" not found`},
		"a child gone fails with the reason, not a requeue forever": {
			objs: []client.Object{run(running), agent}, phase: sessionsv1alpha1.RunFailed, condition: sessionsv1alpha1.ConditionFailed, notes: "was deleted before the run finished",
		},
		"done: Completed with the child kept": {
			objs: []client.Object{run(running), agent, child}, results: map[string]turns.TurnResult{"r1/task": {Text: "found"}},
			phase: sessionsv1alpha1.RunSucceeded, condition: sessionsv1alpha1.ConditionCompleted,
		},
		"a failed task is Failed, not Completed": {
			objs: []client.Object{run(running), agent, child}, results: map[string]turns.TurnResult{"r1/task": {Err: errors.New("boom")}},
			phase: sessionsv1alpha1.RunFailed, condition: sessionsv1alpha1.ConditionFailed, notes: "boom",
		},
		"spec.cancel: Cancelled, announced, nothing more run": {
			objs:  []client.Object{run(running, func(r *sessionsv1alpha1.SubagentRun) { r.Spec.Cancel = true }), agent, child},
			phase: sessionsv1alpha1.RunCancelled, condition: sessionsv1alpha1.ConditionCancelled, notes: "cancelled by spec.cancel",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil, tc.objs...)
			for k, v := range tc.results {
				f.runner.results[k] = v
			}
			key := types.NamespacedName{Namespace: "ns", Name: "run"}
			if _, err := f.runs().Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}
			got := &sessionsv1alpha1.SubagentRun{}
			if err := f.c.Get(context.Background(), key, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != tc.phase {
				t.Errorf("phase = %q, want %q (notes %q)", got.Status.Phase, tc.phase, got.Status.Notes)
			}
			for _, typ := range []string{sessionsv1alpha1.ConditionCompleted, sessionsv1alpha1.ConditionFailed, sessionsv1alpha1.ConditionCancelled} {
				if set := meta.IsStatusConditionTrue(got.Status.Conditions, typ); set != (typ == tc.condition) {
					t.Errorf("condition %s = %v", typ, set)
				}
			}
			if tc.notes != "" && !containsText(got.Status.Notes, tc.notes) {
				t.Errorf("notes = %q, want it to say %q", got.Status.Notes, tc.notes)
			}
			if diff := cmp.Diff(tc.submitted, f.runner.submitted); diff != "" {
				t.Errorf("submitted turns (-want +got):\n%s", diff)
			}
			if tc.condition == sessionsv1alpha1.ConditionCompleted {
				kept := &sessionsv1alpha1.AgentSession{}
				if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(child), kept); err != nil {
					t.Fatal(err)
				}
				if _, ok := kept.Annotations[sessionsv1alpha1.ArchiveAtAnnotation]; !ok || kept.Status.Phase == sessionsv1alpha1.SessionArchived {
					t.Errorf("kept child: annotations %v, phase %q; want an archive-at request and its status untouched", kept.Annotations, kept.Status.Phase)
				}
			}
		})
	}
}

func containsText(s, sub string) bool { return strings.Contains(s, sub) }

// A reply-back turn runs only where a send could: with sends into the requester's session
// denied, the exchange ends with a skipped turn naming the rule and the announce is next.
func TestReplyBackStopsWhereTheSendPolicyDenies(t *testing.T) {
	pol := &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"},
		Spec: sessionsv1alpha1.SessionPolicySpec{SendPolicy: sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{
			{Match: sessionsv1alpha1.SendRuleMatch{KeyPrefix: "agent:alice:"}, Action: sessionsv1alpha1.ActionDeny}}}}}
	f := newFixture(t, nil, send(fromAlice),
		session("agent:bob:main", "bob"), session("agent:alice:main", "alice"), pol)
	f.runner.results["u1/round-1"] = turns.TurnResult{Text: "hi alice"}
	_, got := reconcileSend(t, f)
	if diff := cmp.Diff([]string{"u1/announce"}, f.runner.submitted); diff != "" {
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

// The kinds share their status through sessionsv1alpha1.OwnerStatus: the runner asks a kind only for what
// differs (steps, progress, phase, afterFinish), not for copied accessors.
func TestOwnerKindIsSmall(t *testing.T) {
	if n := reflect.TypeFor[ownerKind[*sessionsv1alpha1.SessionSend]]().NumMethod(); n > 4 {
		t.Errorf("ownerKind has %d methods, want at most 4", n)
	}
	send := &sessionsv1alpha1.SessionSend{}
	send.GetOwnerStatus().CompletedAt = &metav1.Time{Time: epoch}
	if !sendFinished(send) || send.Status.CompletedAt == nil {
		t.Error("the shared status is not the send's status")
	}
}
