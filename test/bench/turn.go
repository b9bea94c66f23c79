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

package main

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

func init() {
	register("turn", benchTurn)
}

const (
	turnNS = "bench"
	// turnSessions spread the turns so no transcript grows long: the figure is the turn
	// engine's cost per turn, not the cost of a long context.
	turnSessions = 64
	turnWarm     = 2000
	turnCount    = 20000
)

// benchTurn measures what the turn engine itself costs per turn: a turn submitted to the engine,
// run in its session's lane with an instant scripted model, appended to an in-memory
// transcript store, its owner woken and its result read. Lookups answer from a map (as the
// informer cache does) and status writes land in an in-memory sink, so nothing but the
// runtime is measured (a status write would land in the sink; the engine makes none). Turns run one after another: wall time per turn is the latency a
// send's step adds, CPU per turn what it costs the manager.
func benchTurn() ([]Figure, error) {
	agent := &sessionsv1alpha1.Agent{
		// A resourceVersion, as every Agent the informer cache holds has: the engine keeps one
		// provider per Agent version (without one it would compile the script every turn).
		ObjectMeta: metav1.ObjectMeta{Namespace: turnNS, Name: "bench", ResourceVersion: "1"},
		Spec:       sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{{Match: ".", Reply: "ok"}}}},
	}
	r := &memReader{agent: agent, sessions: map[string]*sessionsv1alpha1.AgentSession{}}
	st := transcripttest.NewMemoryStore()
	ctx := context.Background()
	for i := range turnSessions {
		key := "agent:bench:webchat:group:t" + strconv.Itoa(i)
		s := &sessionsv1alpha1.AgentSession{
			ObjectMeta: metav1.ObjectMeta{Namespace: turnNS, Name: sessionkey.ObjectName(key)},
			Spec:       sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "bench", ChatType: sessionsv1alpha1.ChatTypeGroup},
			Status:     sessionsv1alpha1.AgentSessionStatus{SessionID: "s" + strconv.Itoa(i), Phase: sessionsv1alpha1.SessionActive},
		}
		r.sessions[key] = s
		if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: turnNS, SessionID: s.Status.SessionID, SessionKey: key}); err != nil {
			return nil, err
		}
	}
	sink := &statusSink{r: r}
	e, err := turns.NewEngine(turns.Options{Client: sink, Reader: r, APIReader: r, Store: st})
	if err != nil {
		return nil, err
	}
	defer e.Stop()
	wake := e.Wake(turns.OwnerSessionSend)
	// The AgentSession controller takes the session reports; here they are only drained.
	go func() {
		for range e.Wake(turns.WakeAgentSession) { //nolint:revive // drained
		}
	}()

	// One timer for every wait: the figures count the engine's allocations, not the bench's.
	timeout := time.NewTimer(time.Hour)
	defer timeout.Stop()
	run := func(n int, prefix string) error {
		for i := range n {
			id := prefix + strconv.Itoa(i)
			owner := turns.Owner{Kind: turns.OwnerSessionSend, NamespacedName: types.NamespacedName{Namespace: turnNS, Name: id}}
			key := "agent:bench:webchat:group:t" + strconv.Itoa(i%turnSessions)
			// The step runner hands the turn the session and Agent it resolved.
			req := turns.TurnRequest{
				ID: id + "/round-1", Namespace: turnNS, SessionKey: key, Session: r.sessions[key], Agent: agent,
				Input: transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "hello"}}},
				Owner: owner,
			}
			if err := e.Submit(ctx, req); err != nil {
				return err
			}
			timeout.Reset(30 * time.Second)
			select {
			case <-wake:
			case <-timeout.C:
				return fmt.Errorf("turn %s not done after 30s", req.ID)
			}
			res, ok := e.Result(owner, req.ID)
			if !ok {
				return fmt.Errorf("turn %s woke without a result", req.ID)
			}
			if res.Err != nil {
				return fmt.Errorf("turn %s: %w", req.ID, res.Err)
			}
			// The reconciler releases a finished owner; so does the bench, or results pile up.
			e.Abort(owner)
		}
		return nil
	}
	if err := run(turnWarm, "warm-"); err != nil {
		return nil, err
	}
	goruntime.GC()
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	cpu0 := processCPUSeconds(os.Getpid())
	start := time.Now()
	if err := run(turnCount, "turn-"); err != nil {
		return nil, err
	}
	wall := time.Since(start)
	cpu1 := processCPUSeconds(os.Getpid())
	goruntime.ReadMemStats(&m1)
	n := float64(turnCount)
	return []Figure{
		{Name: "turn_overhead_us", Value: float64(wall.Microseconds()) / n, Unit: "µs", Target: "< 100 (wall, one turn after another, instant scripted model, in-memory store and status sink)"},
		{Name: "turn_cpu_us", Value: (cpu1 - cpu0) / n * 1e6, Unit: "cpu-µs", Target: "CPU of the bench process per turn (every goroutine, GC included)"},
		{Name: "turn_allocs", Value: float64(m1.Mallocs-m0.Mallocs) / n, Unit: "allocs", Target: "<= 70 heap allocations per turn (the same on any machine)"},
		{Name: "turn_alloc_bytes", Value: float64(m1.TotalAlloc-m0.TotalAlloc) / n, Unit: "B", Target: "<= 32768 bytes allocated per turn (148 KB before the history cache appended in place)"},
		{Name: "turn_status_writes", Value: float64(sink.patches.Load()) / n, Unit: "writes", Target: "0: the engine writes no status (the AgentSession controller does)"},
	}, nil
}

// memReader answers the engine's lookups from memory, as the informer cache does: one Agent,
// the sessions by key, no SessionPolicy.
type memReader struct {
	agent    *sessionsv1alpha1.Agent
	sessions map[string]*sessionsv1alpha1.AgentSession
}

func (r *memReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch o := obj.(type) {
	case *sessionsv1alpha1.Agent:
		if key.Name == r.agent.Name {
			r.agent.DeepCopyInto(o)
			return nil
		}
		return apierrors.NewNotFound(sessionsv1alpha1.GroupVersion.WithResource("agents").GroupResource(), key.Name)
	case *sessionsv1alpha1.AgentSession:
		for _, s := range r.sessions {
			if s.Name == key.Name {
				s.DeepCopyInto(o)
				return nil
			}
		}
		return apierrors.NewNotFound(sessionsv1alpha1.GroupVersion.WithResource("agentsessions").GroupResource(), key.Name)
	}
	return apierrors.NewNotFound(sessionsv1alpha1.GroupVersion.WithResource("objects").GroupResource(), key.Name)
}

func (r *memReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l, ok := list.(*sessionsv1alpha1.AgentSessionList)
	if !ok {
		return nil
	}
	var lo client.ListOptions
	lo.ApplyOptions(opts)
	l.Items = l.Items[:0]
	for _, s := range r.sessions {
		if lo.FieldSelector == nil || lo.FieldSelector.Matches(sessionFields(s)) {
			l.Items = append(l.Items, *s.DeepCopy())
		}
	}
	return nil
}

// sessionFields are the index values a field selector of the lookups matches.
func sessionFields(s *sessionsv1alpha1.AgentSession) fields.Set {
	return fields.Set{cacheindex.SessionKey: s.Spec.Key, cacheindex.SessionID: s.Status.SessionID}
}

// statusSink is the engine's client: reads from memory, status patches counted and dropped.
type statusSink struct {
	client.Client // nil: the turn path calls nothing else
	r             *memReader
	patches       atomic.Int64
}

func (s *statusSink) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return s.r.Get(ctx, key, obj, opts...)
}

func (s *statusSink) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return s.r.List(ctx, list, opts...)
}

func (s *statusSink) Status() client.SubResourceWriter { return sinkWriter{s} }

type sinkWriter struct{ s *statusSink }

func (w sinkWriter) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return nil
}
func (w sinkWriter) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	w.s.patches.Add(1)
	return nil
}
func (w sinkWriter) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	w.s.patches.Add(1)
	return nil
}
func (w sinkWriter) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return nil
}
