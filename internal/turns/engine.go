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
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/agent-sessions/agent-session-operator/internal/approval"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns/window"
)

// Defaults of Options.
const (
	DefaultMaxConcurrentTurns = 64
	DefaultWakeBuffer         = 1024
)

// Errors a TurnResult may carry; match them with errors.Is.
var (
	// ErrDeadline: the turn's Deadline passed.
	ErrDeadline = errors.New("turn deadline exceeded")
	// ErrAborted: the turn was aborted with Abort.
	ErrAborted = errors.New("turn aborted")
	// ErrShutdown: the manager is stopping; submit the turn again after the restart.
	ErrShutdown = errors.New("turn engine shutting down")
	// ErrToolLoop: the model still asked for tools after MaxToolIterations model calls.
	ErrToolLoop = errors.New("tool loop bound reached")
)

// Options configure an Engine. Client, Reader and Store are required.
type Options struct {
	// Client writes what the tools make (SessionSends, SubagentRuns, spec.cancel); never a
	// status: the engine reports to the controllers (SessionReport) and they write it.
	Client client.Client
	// Reader is the manager's informer cache: AgentSessions, Agents and SessionPolicies are
	// read from it, so tools make no API call per row.
	Reader client.Reader
	// APIReader reads Secrets (API keys) uncached, so the manager need not cache every Secret;
	// nil means Client.
	APIReader client.Reader
	// Watcher watches SessionSends while sessions_send waits for a reply; nil means Client
	// when it implements client.WithWatch. Without one, sessions_send with timeoutSeconds > 0
	// reports an error.
	Watcher client.WithWatch
	// Store holds the transcripts.
	Store transcript.Store
	// Retired reads retired sessions' records and archived transcripts for the session
	// tools; nil: they find none.
	Retired transcript.Retired
	// Clock times deadlines, waits and durations; nil means the real clock.
	Clock clock.WithTickerAndDelayedExecution
	// MaxConcurrentTurns bounds the turns running at once across all sessions (default 64).
	MaxConcurrentTurns int
	// MaxTurnsPerNamespace bounds the turns of one namespace running at once, so that no
	// namespace can hold every slot (default half of MaxConcurrentTurns, at least 1).
	MaxTurnsPerNamespace int
	// WakeBuffer is the size of each Wake channel (default 1024).
	WakeBuffer int
	// Recorder, when set, records an Event on the session for failed and aborted turns.
	Recorder events.EventRecorder
	// ModelAttemptTimeout bounds one HTTP attempt of a model call (a hung one is retried);
	// 0 means provider.DefaultAttemptTimeout, negative means no bound.
	ModelAttemptTimeout time.Duration
	// ModelIdleTimeout bounds the silence within a model HTTP attempt (no first byte, no
	// progress); 0 means provider.DefaultIdleTimeout, negative means no bound.
	ModelIdleTimeout time.Duration
	// Egress is the operator's egress policy for model base URLs; nil refuses loopback,
	// link-local and unspecified addresses.
	Egress *egress.Policy
	// NewProvider builds a provider from an Agent's config; nil means provider.New. Tests
	// and benchmarks wrap it to observe model calls.
	NewProvider func(provider.Config) (provider.Provider, error)
	// LiveReplies streams model calls (openai, anthropic) and publishes their text as it
	// arrives through the Store, when it can (see live_reply.go).
	LiveReplies bool
	// Budget judges every model call of every turn before it is made and is charged what
	// it received (the manager's one *budget.Ledger); nil: no budgets.
	Budget budget.Gate
	// Approvals is asked about tool calls that may need a person (verdict, the call's
	// ToolApproval, the request for one); nil is an approval.Desk over Reader, APIReader and
	// Client.
	Approvals approval.Asker
	// Tools are the sources of the turns' non-session tools (MCP servers, remote A2A
	// agents, workspaces); the zero value offers the session tools only.
	Tools ToolSources
}

// Engine runs agent turns: one FIFO lane per session and a global bound. It implements
// Runner and manager.Runnable. Turns run as soon as they are submitted (Start need not have
// been called); Start only ties the engine's life to the manager: when its context ends,
// running turns are cancelled with ErrShutdown and Start returns once they have ended.
type Engine struct {
	opts  Options
	clock clock.WithTickerAndDelayedExecution
	// toolEnv is what the session tools read and write with: the manager's clients.
	toolEnv sessiontools.Env
	slots   *fairShare
	// rootKey seals the root a chain begun here names when it crosses the wire, so that a
	// chain coming back tells its root, and a caller naming a root of ours is not believed.
	rootKey []byte

	base context.Context
	stop context.CancelCauseFunc
	wg   sync.WaitGroup

	mu    sync.Mutex
	lanes map[laneKey]*lane
	jobs  map[string]*job // queued or running, by turn id
	// owners holds, per owner, its queued and running turns and its finished outcomes not
	// yet released (below); the engine's memory is bounded by its live owners.
	owners owners
	wake   map[string]chan event.GenericEvent
	// reports are the sessions' reports their controller has not written yet (report.go).
	reports reports
	seq     uint64

	providers providerCache
	tools     toolset
	approvals approval.Asker
	// windows builds each turn's context (history, fork, compaction's fold, fitting).
	windows window.Builder
}

var (
	_ Runner                         = (*Engine)(nil)
	_ manager.Runnable               = (*Engine)(nil)
	_ manager.LeaderElectionRunnable = (*Engine)(nil)
)

// NewEngine returns an engine ready to take turns.
func NewEngine(o Options) (*Engine, error) {
	if o.Client == nil || o.Reader == nil || o.Store == nil {
		return nil, errors.New("turns: Options.Client, Reader and Store are required")
	}
	if o.APIReader == nil {
		o.APIReader = o.Client
	}
	if o.Watcher == nil {
		o.Watcher, _ = o.Client.(client.WithWatch)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.MaxConcurrentTurns <= 0 {
		o.MaxConcurrentTurns = DefaultMaxConcurrentTurns
	}
	if o.MaxTurnsPerNamespace <= 0 {
		o.MaxTurnsPerNamespace = max(1, o.MaxConcurrentTurns/2)
	}
	if o.WakeBuffer <= 0 {
		o.WakeBuffer = DefaultWakeBuffer
	}
	if o.NewProvider == nil {
		o.NewProvider = provider.New
	}
	if o.Approvals == nil {
		o.Approvals = approval.NewDesk(o.Reader, o.APIReader, o.Client)
	}
	e := &Engine{
		opts:    o,
		clock:   o.Clock,
		slots:   newFairShare(o.MaxConcurrentTurns, o.MaxTurnsPerNamespace),
		lanes:   map[laneKey]*lane{},
		jobs:    map[string]*job{},
		owners:  owners{},
		wake:    map[string]chan event.GenericEvent{},
		reports: reports{},
		tools:   sessionTools(),
		windows: window.NewSource(o.Store, o.Clock, window.DefaultHistoryCacheBytes),
		toolEnv: sessiontools.Env{Client: o.Client, Reader: o.Reader, APIReader: o.APIReader,
			Watcher: o.Watcher, Store: o.Store, Retired: o.Retired, Clock: o.Clock},
	}
	e.tools.src, e.approvals = o.Tools, o.Approvals
	if o.Tools.Sandboxes != nil {
		e.tools.sandbox = sandboxTools(o.Tools.Sandboxes)
		e.tools.sandboxWorkspace = sandboxWorkspaceTools(o.Tools.Sandboxes)
	}
	e.toolEnv.Embeddings = e.embeddings
	e.rootKey = make([]byte, 32)
	if _, err := rand.Read(e.rootKey); err != nil {
		return nil, err
	}
	e.base, e.stop = context.WithCancelCause(context.Background())
	return e, nil
}

// Start implements manager.Runnable: it blocks until ctx ends, then cancels every turn and
// waits for the lanes to drain.
func (e *Engine) Start(ctx context.Context) error {
	<-ctx.Done()
	e.Stop()
	return nil
}

// Stop cancels every queued and running turn with ErrShutdown and waits for them to end.
func (e *Engine) Stop() {
	e.stop(ErrShutdown)
	e.wg.Wait()
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: turns are submitted by the
// reconcilers, which run on the leader only.
func (e *Engine) NeedLeaderElection() bool { return true }

// Submit implements Runner.
func (e *Engine) Submit(_ context.Context, req TurnRequest) error {
	switch {
	case req.ID == "":
		return errors.New("turns: turn without ID")
	case req.Namespace == "" || req.SessionKey == "":
		return fmt.Errorf("turns: turn %s names no session", req.ID)
	case req.Owner.Kind == "" || req.Owner.Name == "":
		return fmt.Errorf("turns: turn %s has no owner", req.ID)
	case req.Session == nil || req.Agent == nil:
		return fmt.Errorf("turns: turn %s comes without its session and Agent", req.ID)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.jobs[req.ID]; ok {
		return nil
	}
	if _, ok := e.owners.result(req.Owner, req.ID); ok {
		return nil
	}
	j := e.newJob(req)
	e.owners.add(j)
	e.enqueueLocked(j)
	return nil
}

// newJob makes the job of a submitted turn; the request's Deadline, when set, cancels it.
func (e *Engine) newJob(req TurnRequest) *job {
	ctx, cancel := context.WithCancelCause(e.base)
	j := &job{req: req, ctx: ctx, cancel: cancel}
	if !req.Deadline.IsZero() {
		stop := e.cancelAfter(cancel, req.Deadline.Sub(e.clock.Now()))
		// Every end of the job stops the deadline's timer.
		j.cancel = func(cause error) { stop(); cancel(cause) }
	}
	return j
}

// cancelAfter cancels a context with ErrDeadline once d has passed on the engine's clock.
// The caller calls the returned func when the context ends some other way: it stops the
// timer at once, so a finished turn leaves no timer behind on the clock. No goroutine waits
// on the timer: the clock runs cancel when it fires.
func (e *Engine) cancelAfter(cancel context.CancelCauseFunc, d time.Duration) func() {
	if d <= 0 {
		cancel(ErrDeadline)
		return func() {}
	}
	t := e.clock.AfterFunc(d, func() { cancel(ErrDeadline) })
	return func() { t.Stop() }
}

// Result implements Runner.
func (e *Engine) Result(owner Owner, id string) (TurnResult, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.owners.result(owner, id)
}

// Abort implements Runner: the owner's running turns are cancelled (their model calls see
// the context end) and end with ErrAborted, marking their sessions abortedLastRun; queued
// ones are dropped; finished outcomes are forgotten, and so are those of the cancelled turns
// when they end. It reports how many turns were queued or running.
func (e *Engine) Abort(owner Owner) int {
	e.mu.Lock()
	live := e.owners.release(owner)
	e.mu.Unlock()
	for _, j := range live {
		j.cancel(ErrAborted)
	}
	return len(live)
}

// Holds reports whether the engine holds a turn or an outcome of owner.
func (e *Engine) Holds(owner Owner) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.owners[owner]
	return ok
}

// Owners reports how many owners the engine holds turns or outcomes for: those with a turn
// queued or running, or a finished one not yet released with Abort.
func (e *Engine) Owners() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.owners)
}

// finish records a turn's outcome and wakes its owner.
func (e *Engine) finish(j *job, res TurnResult) {
	e.mu.Lock()
	delete(e.jobs, j.req.ID)
	e.owners.finish(j, res)
	ch := e.wakeLocked(j.req.Owner.Kind)
	e.mu.Unlock()
	e.send(ch, event.GenericEvent{Object: ownerObject(j.req.Owner)})
}

// now is the engine clock's time.
func (e *Engine) now() time.Time { return e.clock.Now() }

// owners is the engine's bookkeeping of turns by the object that asked for them. An entry
// lives while its owner has a turn queued or running or an outcome it has not released;
// Abort releases it. A turn cancelled by Abort records no outcome when it ends, so a
// deleted owner leaves nothing behind. Guarded by Engine.mu.
type owners map[Owner]*ownerTurns

type ownerTurns struct {
	live    map[string]*job // queued or running, by turn id
	results map[string]TurnResult
}

func (o owners) entry(owner Owner) *ownerTurns {
	t, ok := o[owner]
	if !ok {
		t = &ownerTurns{live: map[string]*job{}, results: map[string]TurnResult{}}
		o[owner] = t
	}
	return t
}

// add records a submitted turn.
func (o owners) add(j *job) { o.entry(j.req.Owner).live[j.req.ID] = j }

// finish moves an ended turn to its owner's outcomes, unless the owner released it.
func (o owners) finish(j *job, res TurnResult) {
	t, ok := o[j.req.Owner]
	if !ok || t.live[j.req.ID] != j {
		return
	}
	delete(t.live, j.req.ID)
	t.results[j.req.ID] = res
}

func (o owners) result(owner Owner, id string) (TurnResult, bool) {
	t, ok := o[owner]
	if !ok {
		return TurnResult{}, false
	}
	r, ok := t.results[id]
	return r, ok
}

// release forgets owner and returns its queued and running turns, for the caller to cancel.
func (o owners) release(owner Owner) []*job {
	t, ok := o[owner]
	if !ok {
		return nil
	}
	delete(o, owner)
	live := make([]*job, 0, len(t.live))
	for _, j := range t.live {
		live = append(live, j)
	}
	return live
}
