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

// Package controllers wires the reconcilers: SetupWithManager is the one place that builds
// each kind's reconciler (a package per kind: agent, agentsession, sessionsend, subagentrun,
// sessionpolicy, toolapproval, sessionschedule, sessionhook) with what they share (the
// announcer of package announce, the turn engine, the clock) and registers it. What the
// reconcilers share in code (the owner kinds' step runner, the one status write, conflicts,
// kstatus) is package ownerflow. Controllers are the only writers of status; the turn
// engine reports. The rules they apply come from internal/policy.
package controllers

import (
	"errors"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/agent-sessions/agent-session-operator/controllers/agent"
	"github.com/agent-sessions/agent-session-operator/controllers/agentsession"
	"github.com/agent-sessions/agent-session-operator/controllers/announce"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/controllers/sessionhook"
	"github.com/agent-sessions/agent-session-operator/controllers/sessionpolicy"
	"github.com/agent-sessions/agent-session-operator/controllers/sessionschedule"
	"github.com/agent-sessions/agent-session-operator/controllers/sessionsend"
	"github.com/agent-sessions/agent-session-operator/controllers/subagentrun"
	"github.com/agent-sessions/agent-session-operator/controllers/toolapproval"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// DefaultTTLAfterFinished is the manager's default for --ttl-after-finished: finished sends
// and runs are garbage, and a runaway chain of them must not fill etcd.
const DefaultTTLAfterFinished = 24 * time.Hour

// Options wire the reconcilers to the turn engine, the transcript store and the outside.
type Options struct {
	Runner turns.Runner
	Store  transcript.Store
	// Clock times timeouts and TTLs; nil is the real clock.
	Clock clock.Clock
	// WorkspaceRoot holds the sub-agent workspaces (attachments).
	WorkspaceRoot string
	// Deliverer posts announces; nil is delivery.New(nil), which refuses loopback and
	// link-local sinks.
	Deliverer *delivery.Deliverer
	// Concurrency is MaxConcurrentReconciles of the session, send and run controllers
	// (default 16): a send's or run's reconcile may wait on an announce delivery, and a
	// burst of new sessions on their transcripts.
	Concurrency int
	// Events hands out the controllers' event recorders; nil is the manager's.
	Events EventRecorders
	// SessionStatusInterval is how long the AgentSession controller lets the turn engine's
	// reports of a session gather before it writes them (one status write per busy
	// session per interval); 0 is DefaultSessionStatusInterval, negative writes at once.
	SessionStatusInterval time.Duration
	// TTLAfterFinished deletes finished SessionSends and SubagentRuns whose
	// spec.ttlSecondsAfterFinished is unset that long after they finished; 0 keeps them.
	TTLAfterFinished time.Duration
	// MCP is the MCP tool server pool the engine uses; the Agent reconciler reports on
	// the servers through it. Nil skips that report.
	MCP *mcptools.Pool
	// A2A reads the cards of Agents' remote A2A agents, as the engine does; the Agent
	// reconciler reports on them through it (with the MCP probes). Nil skips that report.
	A2A *a2atools.Client
	// MCPProbeTimeout bounds one readiness probe of an Agent's MCP servers (default
	// DefaultMCPProbeTimeout), whatever the servers' call timeouts.
	MCPProbeTimeout time.Duration
	// MCPProbesPerNamespace is how many Agents of one namespace are probed at once (default
	// DefaultMCPProbesPerNamespace): hanging servers cost only their namespace.
	MCPProbesPerNamespace int
	// Shard limits the controllers to the namespaces of one shard (--shard); the zero value
	// owns them all.
	Shard shard.Shard
	// SendFeed receives the changes of the shard's SessionSends for the transcript-store's
	// /events; nil is Store when it is one (the transcript client), else none.
	SendFeed sessionsend.SendFeed
	// Budget is the manager's one budget ledger, the one the engine judges and charges every
	// model call with: the SessionPolicy controller records its namespace windows in
	// status.spend. Nil records none.
	Budget *budget.Ledger
	// HookBaseURL is the transcript-store listener's external URL (https://host:port), the
	// base of each SessionHook's status.url; empty leaves status.url a path.
	HookBaseURL string
	// Sandbox turns on sandboxed sessions' sandboxes (agent-sandbox must be installed); nil
	// leaves them off.
	Sandbox *agent.SandboxOptions
	// SandboxWorkspaces puts a sandboxed child's attachments in its sandbox (the engine's
	// internal/sandbox.Sandboxes); nil puts them in WorkspaceRoot.
	SandboxWorkspaces subagentrun.SandboxWorkspaces
	// HookKeys receives the SessionHooks' keys for the transcript-store's /hooks door; nil
	// is Store when it is one (the transcript client), else none.
	HookKeys sessionhook.HookKeys
	// HookDeliveries reports the deliveries the /hooks door accepted, which the SessionHook
	// controller writes in the hooks' status; nil is Store when it is one (the transcript
	// client), else none.
	HookDeliveries sessionhook.HookDeliveries
	// OrphanSweepInterval is the time between sweeps of live transcripts whose session is
	// gone; 0 is agentsession.DefaultOrphanSweepInterval.
	OrphanSweepInterval time.Duration
	// Retirer keeps the records of the archived sessions the SessionPolicy's retention
	// retires (deletes); nil is Store when it is one (the transcript client), else no
	// session is retired.
	Retirer transcript.Retirer
}

// EventRecorders hands out an event recorder per reporting controller (a manager, or an
// *eventrec.Provider).
type EventRecorders interface {
	GetEventRecorder(name string) recorder.EventRecorder
}

// SetupWithManager registers every reconciler. The cache's field indexes must be registered
// first (cacheindex.Setup).
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	if o.Runner == nil || o.Store == nil {
		return errors.New("controllers: Options.Runner and Store are required")
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Deliverer == nil {
		o.Deliverer = delivery.New(nil)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if o.Events == nil {
		o.Events = mgr
	}
	if o.SessionStatusInterval == 0 {
		o.SessionStatusInterval = agentsession.DefaultSessionStatusInterval
	}
	// Each controller sees only the namespaces of this manager's shard.
	b := func() *builder.Builder { return ctrl.NewControllerManagedBy(mgr).WithEventFilter(o.Shard.Predicate()) }
	c := mgr.GetClient()
	l := lookup.New(c, mgr.GetAPIReader())
	ann := announce.New(l, mgr.GetAPIReader(), o.Deliverer, o.Events.GetEventRecorder("announce-delivery"), o.Clock)
	owners := func(name string) ownerflow.OwnerDeps {
		return ownerflow.OwnerDeps{Client: c, Lookup: l, Runner: o.Runner, Clock: o.Clock, Recorder: o.Events.GetEventRecorder(name), Transcripts: o.Store}
	}
	sends := &sessionsend.SessionSendReconciler{OwnerDeps: owners("sessionsend-controller"), Announcer: ann, TTL: o.TTLAfterFinished}
	sends.FinishedTTL = sessionsend.NewSendTTL(mgr.GetAPIReader(), c, o.Clock, o.TTLAfterFinished, o.Shard.Owns)
	var runnables []error
	if feed, ok := o.Store.(sessionsend.SendFeed); o.SendFeed == nil && ok {
		o.SendFeed = feed
	}
	if keys, ok := o.Store.(sessionhook.HookKeys); o.HookKeys == nil && ok {
		o.HookKeys = keys
	}
	if d, ok := o.Store.(sessionhook.HookDeliveries); o.HookDeliveries == nil && ok {
		o.HookDeliveries = d
	}
	if r, ok := o.Store.(transcript.Retirer); o.Retirer == nil && ok {
		o.Retirer = r
	}
	if o.Retirer != nil {
		runnables = append(runnables, (&sessionpolicy.RetentionReconciler{Client: c, Records: o.Retirer, Clock: o.Clock,
			Recorder: o.Events.GetEventRecorder("sessionretention-controller")}).SetupWith(b()))
	}
	if o.SendFeed != nil {
		sends.Feed = sessionsend.NewSendFeed(o.SendFeed, mgr.GetCache(), o.Shard.Owns, sessionsend.PollClock{PassiveClock: o.Clock})
		runnables = append(runnables, mgr.Add(sends.Feed))
	}
	probes := agent.NewMCPProbes(o.MCP, o.A2A, o.MCPProbeTimeout, o.MCPProbesPerNamespace)
	// A deleted session's transcript, workspace and claim: its delete event's cleanup, and
	// the sweep of what no delete event reached.
	cleanup := &agentsession.Cleanup{Client: c, Store: o.Store, WorkspaceRoot: o.WorkspaceRoot, Sandboxes: o.Sandbox != nil, Owns: o.Shard.Owns}
	orphans := &agentsession.OrphanSweep{Cache: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Store: o.Store, WorkspaceRoot: o.WorkspaceRoot,
		Owns: o.Shard.Owns, Clock: o.Clock, Interval: o.OrphanSweepInterval}
	return errors.Join(append(runnables,
		cleanup.SetupWithManager(mgr, o.Concurrency),
		mgr.Add(orphans),
		mgr.Add(sends.FinishedTTL),
		mgr.Add(probes),
		(&agentsession.AgentSessionReconciler{Client: c, Store: o.Store, Retired: o.Retirer, Runner: o.Runner, StatusInterval: o.SessionStatusInterval, Clock: o.Clock, Recorder: o.Events.GetEventRecorder("agentsession-controller"),
			WorkspaceRoot: o.WorkspaceRoot, Sandboxes: o.Sandbox != nil}).SetupWith(b(), o.Concurrency),
		(&agent.AgentReconciler{Client: c, APIReader: mgr.GetAPIReader(), MCP: o.MCP, A2A: o.A2A, Sandbox: o.Sandbox}).SetupWith(b(), probes),
		(&sessionpolicy.SessionPolicyReconciler{Client: c, APIReader: mgr.GetAPIReader(), Spend: sessionpolicy.NewSpendWriter(o.Budget)}).SetupWith(b()),
		sends.SetupWith(b(), o.Concurrency),
		(&subagentrun.SubagentRunReconciler{OwnerDeps: owners("subagentrun-controller"), Announcer: ann, WorkspaceRoot: o.WorkspaceRoot,
			Sandboxes: o.SandboxWorkspaces, TTL: o.TTLAfterFinished}).SetupWith(b(), o.Concurrency),
		(&toolapproval.ToolApprovalReconciler{Client: c, Clock: o.Clock, Recorder: o.Events.GetEventRecorder("toolapproval-controller"),
			Announcer: ann}).SetupWith(b()),
		(&sessionschedule.SessionScheduleReconciler{Client: c, APIReader: mgr.GetAPIReader(), Clock: o.Clock,
			Recorder: o.Events.GetEventRecorder("sessionschedule-controller")}).SetupWith(b()),
		(&sessionhook.SessionHookReconciler{Client: c, APIReader: mgr.GetAPIReader(), HookBaseURL: o.HookBaseURL, Keys: o.HookKeys, Deliveries: o.HookDeliveries,
			Recorder: o.Events.GetEventRecorder("sessionhook-controller")}).SetupWith(b()),
	)...)
}
