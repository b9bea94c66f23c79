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

package turns

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns/window"
)

const ns = "team"

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(sessionsv1alpha1.AddToScheme(s))
	return s
}

// scriptedAgent is an Agent on the scripted provider with rules (match, reply, delay).
func scriptedAgent(id string, rules ...sessionsv1alpha1.ScriptRule) *sessionsv1alpha1.Agent {
	return &sessionsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: id},
		Spec: sessionsv1alpha1.AgentSpec{
			Model:        sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: rules},
			SystemPrompt: "You are " + id + ".",
		},
	}
}

func rule(match, reply string) sessionsv1alpha1.ScriptRule {
	return sessionsv1alpha1.ScriptRule{Match: match, Reply: reply}
}

func slowRule(match, reply string, d time.Duration) sessionsv1alpha1.ScriptRule {
	r := rule(match, reply)
	r.Delay = &metav1.Duration{Duration: d}
	return r
}

// toolRule calls one tool with args and replies with the tool results.
func toolRule(match, toolName string, args any) sessionsv1alpha1.ScriptRule {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	r := rule(match, "tools: {{toolResults}}")
	r.ToolCalls = []sessionsv1alpha1.ScriptToolCall{{Name: toolName, Arguments: &runtime.RawExtension{Raw: b}}}
	return r
}

// session is an AgentSession named as the session controller names them, with a sessionId.
func session(key, agentID, sessionID string) *sessionsv1alpha1.AgentSession {
	return &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)},
		Spec:       sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agentID},
		Status:     sessionsv1alpha1.AgentSessionStatus{SessionID: sessionID, Phase: sessionsv1alpha1.SessionActive},
	}
}

// fixture is an engine on a fake client, a fake clock and a FileStore in a temp dir.
type fixture struct {
	t      *testing.T
	clock  *clocktesting.FakeClock
	client client.WithWatch
	store  *store.FileStore
	dir    string
	engine *Engine
	calls  *callCounter
}

type fixtureOption func(*Options)

func newFixture(t *testing.T, objs []client.Object, opts ...fixtureOption) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: clocktesting.NewFakeClock(epoch), dir: t.TempDir(), calls: &callCounter{}}
	b := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objs...).
		WithStatusSubresource(&sessionsv1alpha1.AgentSession{}, &sessionsv1alpha1.SessionSend{}, &sessionsv1alpha1.SubagentRun{})
	// The engine's lookups read by the manager's field indexes, as from its cache.
	f.client = testenv.IndexFake(b).Build()
	f.openStore()
	for _, o := range objs {
		if s, ok := o.(*sessionsv1alpha1.AgentSession); ok && s.Status.SessionID != "" {
			f.createTranscript(s)
		}
	}
	f.engine = f.newEngine(opts...)
	return f
}

func (f *fixture) openStore() {
	st, err := store.OpenFileStore(f.dir, store.WithClock(f.clock))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = st.Close() })
	f.store = st
}

func (f *fixture) createTranscript(s *sessionsv1alpha1.AgentSession) {
	if _, err := f.store.CreateSession(context.Background(), transcript.SessionHeader{
		Namespace: ns, SessionID: s.Status.SessionID, SessionKey: s.Spec.Key, ParentSessionKey: s.Spec.SpawnedBy,
	}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) newEngine(opts ...fixtureOption) *Engine {
	o := Options{Client: f.client, Reader: f.client, Store: f.store, Clock: f.clock, NewProvider: f.calls.wrap}
	for _, fn := range opts {
		fn(&o)
	}
	e, err := NewEngine(o)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(e.Stop)
	return e
}

func maxConcurrent(n int) fixtureOption { return func(o *Options) { o.MaxConcurrentTurns = n } }

// turnReq is a turn in session key with input text, owned by a SessionSend named after id.
func turnReq(id, key, text string) TurnRequest {
	return TurnRequest{
		ID: id, Namespace: ns, SessionKey: key,
		Input: transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}},
		Owner: ownerOf(id),
	}
}

// ownerOf is the owner turnReq gives turn id.
func ownerOf(id string) Owner {
	return Owner{Kind: OwnerSessionSend, NamespacedName: types.NamespacedName{Namespace: ns, Name: "send-" + id}}
}

// submit submits req with its session and Agent, as the step runner resolves them.
func (f *fixture) submit(req TurnRequest) {
	f.t.Helper()
	f.resolve(&req)
	if err := f.engine.Submit(context.Background(), req); err != nil {
		f.t.Fatal(err)
	}
}

// resolve sets req's session and Agent from the fixture's objects.
func (f *fixture) resolve(req *TurnRequest) {
	f.t.Helper()
	ctx := context.Background()
	s := &sessionsv1alpha1.AgentSession{}
	if err := f.client.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: sessionkey.ObjectName(req.SessionKey)}, s); err != nil {
		f.t.Fatal(err)
	}
	a := &sessionsv1alpha1.Agent{}
	if err := f.client.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: s.Spec.AgentID}, a); err != nil {
		f.t.Fatal(err)
	}
	req.Session, req.Agent = s, a
}

// report returns the engine's report of session keyA once every lane is idle.
func (f *fixture) report() SessionReport {
	f.t.Helper()
	s := f.settled(keyA)
	r, _ := f.engine.SessionReport(types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
	return r
}

// await blocks until the engine wakes the owner of id, then returns the turn's result.
// Other owners' wake events that arrive first are skipped.
func (f *fixture) await(id string) TurnResult {
	f.t.Helper()
	want := "send-" + id
	for ev := range f.engine.Wake(OwnerSessionSend) {
		if ev.Object.GetName() != want {
			continue
		}
		r, ok := f.engine.Result(ownerOf(id), id)
		if !ok {
			f.t.Fatalf("woken for %s without a result", id)
		}
		return r
	}
	panic("unreachable")
}

// awaitWake blocks until the engine wakes the owner of id.
func (f *fixture) awaitWake(id string) {
	want := "send-" + id
	for ev := range f.engine.Wake(OwnerSessionSend) {
		if ev.Object.GetName() == want {
			return
		}
	}
}

// waitTimers blocks until n timers wait on the fake clock. A running turn holds one (its
// agent's turn timeout), a scripted delay another, a request Deadline a third.
func (f *fixture) waitTimers(n int) {
	for f.clock.Waiters() < n {
		time.Sleep(time.Millisecond)
	}
}

// records returns the transcript of a session as (key, role, text) triples.
func (f *fixture) records(sessionID string) []rec {
	f.t.Helper()
	page, err := f.store.Read(context.Background(), ns, sessionID, transcript.ReadOptions{Limit: transcript.MaxLimit, IncludeTools: true})
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([]rec, 0, len(page.Messages))
	for _, r := range page.Messages {
		shown, _ := window.ToProvider(&r.Message) // its text, whether the model sees it or not
		out = append(out, rec{Key: r.IdempotencyKey, Role: r.Message.Role, Text: shown.Text})
	}
	return out
}

type rec struct{ Key, Role, Text string }

// settled returns session key once every lane is idle: a finished turn's status goes to the
// session after its owner is woken, so it is written once its lane has moved on.
func (f *fixture) settled(key string) *sessionsv1alpha1.AgentSession {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		f.engine.mu.Lock()
		idle := len(f.engine.lanes) == 0
		f.engine.mu.Unlock()
		if idle {
			return f.session(key)
		}
		if time.Now().After(deadline) {
			f.t.Fatal("lanes still busy after 30s")
		}
		time.Sleep(time.Millisecond)
	}
}

func (f *fixture) session(key string) *sessionsv1alpha1.AgentSession {
	f.t.Helper()
	s := &sessionsv1alpha1.AgentSession{}
	if err := f.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: sessionkey.ObjectName(key)}, s); err != nil {
		f.t.Fatal(err)
	}
	return s
}

// callCounter wraps providers to count model calls and the most that ran at once.
type callCounter struct {
	mu             sync.Mutex
	calls, running int
	maxRunning     int
	last           provider.Request
}

// lastRequest is the request of the latest model call.
func (c *callCounter) lastRequest() provider.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

func (c *callCounter) wrap(cfg provider.Config) (provider.Provider, error) {
	p, err := provider.New(cfg)
	if err != nil {
		return nil, err
	}
	return countingProvider{p, c}, nil
}

func (c *callCounter) snapshot() (calls, maxRunning int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.maxRunning
}

type countingProvider struct {
	provider.Provider
	c *callCounter
}

func (p countingProvider) Complete(ctx context.Context, req provider.Request) (*provider.Response, error) {
	p.c.mu.Lock()
	p.c.calls++
	p.c.last = req
	p.c.running++
	p.c.maxRunning = max(p.c.maxRunning, p.c.running)
	p.c.mu.Unlock()
	defer func() {
		p.c.mu.Lock()
		p.c.running--
		p.c.mu.Unlock()
	}()
	return p.Provider.Complete(ctx, req)
}
