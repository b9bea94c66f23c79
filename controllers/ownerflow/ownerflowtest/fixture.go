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

package ownerflowtest

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// Epoch is the fake clock's start.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeRunner is a turn engine whose turns end when a test says so.
type fakeRunner struct {
	Results   map[string]turns.TurnResult
	Submitted []string
	// Inputs and Systems are the submitted turns' input texts and system contexts, by id.
	Inputs, Systems map[string]string
	Aborted         []turns.Owner
	// reports are the sessions' reports; written, the seqs acknowledged.
	Reports map[types.NamespacedName]turns.SessionReport
	Written []uint64
}

func (f *fakeRunner) Submit(_ context.Context, req turns.TurnRequest) error {
	f.Submitted = append(f.Submitted, req.ID)
	if f.Inputs == nil {
		f.Inputs, f.Systems = map[string]string{}, map[string]string{}
	}
	f.Inputs[req.ID], f.Systems[req.ID] = transcript.MessageText(&req.Input), req.SystemContext
	return nil
}
func (f *fakeRunner) Result(_ turns.Owner, id string) (turns.TurnResult, bool) {
	r, ok := f.Results[id]
	return r, ok
}
func (f *fakeRunner) Abort(o turns.Owner) int {
	f.Aborted = append(f.Aborted, o)
	return 0
}
func (f *fakeRunner) Wake(string) <-chan event.GenericEvent { return nil }
func (f *fakeRunner) SessionReport(key types.NamespacedName) (turns.SessionReport, bool) {
	r, ok := f.Reports[key]
	return r, ok
}
func (f *fakeRunner) ReportWritten(_ types.NamespacedName, seq uint64) {
	f.Written = append(f.Written, seq)
}

// fakeRecorder keeps the reasons of the Events it is given.
type fakeRecorder struct{ Reasons []string }

func (r *fakeRecorder) Eventf(_, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	r.Reasons = append(r.Reasons, reason)
}

func (r *fakeRecorder) AnnotatedEventf(_, _ runtime.Object, _ map[string]string, _, reason, _, _ string, _ ...any) {
	r.Reasons = append(r.Reasons, reason)
}

// Fixture is a fake client (with the cache's indexes and status subresources), a fake clock,
// a fake turn engine and an event recorder.
type Fixture struct {
	C      client.Client
	Clock  *clocktesting.FakeClock
	Runner *fakeRunner
	Events *fakeRecorder
}

// NewFixture holds objs (and the Agent of each session among them); funcs, when set, intercept
// the client's calls.
func NewFixture(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) *Fixture {
	t.Helper()
	objs = withAgents(objs)
	c := testenv.IndexFake(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).
		WithStatusSubresource(&sessionsv1alpha1.SessionSend{}, &sessionsv1alpha1.SubagentRun{}, &sessionsv1alpha1.AgentSession{})).Build()
	if funcs != nil {
		c = interceptor.NewClient(c, *funcs)
	}
	return &Fixture{C: c, Clock: clocktesting.NewFakeClock(Epoch), Runner: &fakeRunner{Results: map[string]turns.TurnResult{}}, Events: &fakeRecorder{}}
}

// Deps wires a reconciler of turn owners to the fixture's fakes.
func (f *Fixture) Deps() ownerflow.OwnerDeps {
	l := lookup.New(f.C, nil)
	return ownerflow.OwnerDeps{Client: f.C, Lookup: l, Runner: f.Runner, Clock: f.Clock, Recorder: f.Events}
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

// Session is the session with key, of agent, with a sessionId.
func Session(key, agent string) *sessionsv1alpha1.AgentSession {
	return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s-" + agent, Namespace: "ns"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agent}, Status: sessionsv1alpha1.AgentSessionStatus{SessionID: "sid-" + agent}}
}

// LongText is a reply well past status's preview, with its end where a cut would lose it.
var LongText = strings.Repeat("a", 3*ownerflow.MaxStatusText) + "THE-END"

// Recorded appends text to a new transcript of session key in store, as the engine would
// record a turn's reply, and returns its seq.
func Recorded(t *testing.T, store transcript.Store, sessionID, key, text string) int64 {
	t.Helper()
	if _, err := store.CreateSession(context.Background(), transcript.SessionHeader{Namespace: "ns", SessionID: sessionID, SessionKey: key}); err != nil {
		t.Fatal(err)
	}
	recs, err := store.Append(context.Background(), "ns", sessionID, transcript.AppendRequest{Message: transcript.Message{
		Role: transcript.RoleAssistant, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}})
	if err != nil {
		t.Fatal(err)
	}
	return recs[0].Seq
}
