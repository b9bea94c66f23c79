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

package agent

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
)

// Defaults of the MCP readiness probes (--mcp-probe-timeout, --mcp-probes-per-namespace).
const (
	DefaultMCPProbeTimeout       = 10 * time.Second
	DefaultMCPProbesPerNamespace = 4
)

// MCPProbes asks Agents' MCP servers whether they answer (and reads their remote A2A
// agents' cards), off the reconcile workers: a
// server that accepts and never answers must not hold a worker every namespace shares. A
// probe runs in its own goroutine, bounded by a timeout of its own (not the servers' call
// timeouts) and by a number of probes per namespace at once, so a namespace's hanging
// servers hold only that namespace's slots. When a probe ends its Agent is reconciled again
// (done) and takes the result.
type MCPProbes struct {
	pool    *mcptools.Pool
	a2a     *a2atools.Client
	timeout time.Duration
	perNS   int
	done    chan event.GenericEvent

	// ctx ends the probes when the manager stops.
	ctx  context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	slots   map[string]*nsSlots
	running map[types.NamespacedName]bool
	results map[types.NamespacedName]probeResult
}

// nsSlots are one namespace's probe slots; users counts the probes running or waiting, so
// the entry goes when the namespace has none.
type nsSlots struct {
	sem   chan struct{}
	users int
}

// probeResult is what a probe of one Agent generation found.
type probeResult struct {
	uid        types.UID
	generation int64
	servers    []sessionsv1alpha1.MCPServerStatus
	cards      []sessionsv1alpha1.A2AAgentStatus
}

// NewMCPProbes probes the MCP servers (pool) and A2A agents (a2a) of Agents off the
// reconcile, each probe bounded by timeout, perNamespace at once in a namespace.
func NewMCPProbes(pool *mcptools.Pool, a2a *a2atools.Client, timeout time.Duration, perNamespace int) *MCPProbes {
	if timeout <= 0 {
		timeout = DefaultMCPProbeTimeout
	}
	if perNamespace <= 0 {
		perNamespace = DefaultMCPProbesPerNamespace
	}
	ctx, stop := context.WithCancel(context.Background())
	return &MCPProbes{pool: pool, a2a: a2a, timeout: timeout, perNS: perNamespace, done: make(chan event.GenericEvent),
		ctx: ctx, stop: stop, slots: map[string]*nsSlots{},
		running: map[types.NamespacedName]bool{}, results: map[types.NamespacedName]probeResult{}}
}

// Start waits for the manager to stop, then ends the probes (manager.Runnable).
func (p *MCPProbes) Start(ctx context.Context) error {
	<-ctx.Done()
	p.stop()
	return nil
}

// result takes the finished probe of a's generation; a result of another generation or
// another Agent of the same name is dropped.
func (p *MCPProbes) result(a *sessionsv1alpha1.Agent) (probeResult, bool) {
	key := types.NamespacedName{Namespace: a.Namespace, Name: a.Name}
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.results[key]
	delete(p.results, key)
	return r, ok && r.uid == a.UID && r.generation == a.Generation
}

// start probes a unless a probe of it is under way (its end reconciles a again, which then
// starts one for a newer generation).
func (p *MCPProbes) start(a *sessionsv1alpha1.Agent) {
	key := types.NamespacedName{Namespace: a.Namespace, Name: a.Name}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running[key] {
		return
	}
	p.running[key] = true
	go p.run(key, a.DeepCopy())
}

func (p *MCPProbes) run(key types.NamespacedName, a *sessionsv1alpha1.Agent) {
	r := probeResult{uid: a.UID, generation: a.Generation}
	if release, ok := p.acquire(key.Namespace); ok {
		if p.pool != nil {
			r.servers = p.pool.Probe(p.ctx, a, p.timeout).Status()
		}
		if p.a2a != nil {
			r.cards = p.a2a.Probe(p.ctx, a, p.timeout).Status()
		}
		release()
	}
	p.mu.Lock()
	delete(p.running, key)
	if p.ctx.Err() == nil {
		p.results[key] = r
	}
	p.mu.Unlock()
	select {
	case p.done <- event.GenericEvent{Object: a}:
	case <-p.ctx.Done():
	}
}

// acquire waits for one of namespace's probe slots; false when the manager stops first.
func (p *MCPProbes) acquire(namespace string) (func(), bool) {
	p.mu.Lock()
	s := p.slots[namespace]
	if s == nil {
		s = &nsSlots{sem: make(chan struct{}, p.perNS)}
		p.slots[namespace] = s
	}
	s.users++
	p.mu.Unlock()
	leave := func() {
		p.mu.Lock()
		if s.users--; s.users == 0 {
			delete(p.slots, namespace)
		}
		p.mu.Unlock()
	}
	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem; leave() }, true
	case <-p.ctx.Done():
		leave()
		return nil, false
	}
}

// forget drops what is known of a deleted Agent.
func (p *MCPProbes) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.results, key)
}
