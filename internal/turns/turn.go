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

// Package turns is the turn engine inside the manager: one FIFO lane per session, a bounded
// executor, the tool loop, and the session tools (sessions_list, sessions_history,
// sessions_send, sessions_spawn, agents_list) that agents call. What a turn's model sees of
// its session (history, fork, compaction's fold, fitting) is built by internal/turns/window.
//
// This file is the contract between the engine and the controllers: reconcilers Submit a turn
// and return; when it finishes the engine sends a GenericEvent for the turn's Owner on the
// channel Wake(kind) returns, and the reconciler reads the outcome with Result. The engine
// writes no Kubernetes status: what a session's status shows of its turns is a SessionReport
// the AgentSession controller reads when Wake(WakeAgentSession) names the session.
package turns

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns/window"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// Owner kinds whose reconcilers are woken when their turns finish.
const (
	OwnerSessionSend = "SessionSend"
	OwnerSubagentRun = "SubagentRun"
	// OwnerAgentSession owns the compaction steps a session's compact-request asks for;
	// they end on the session's Wake(WakeAgentSession), as its reports do.
	OwnerAgentSession = WakeAgentSession
)

// Owner is the object that asked for a turn; it is woken when the turn ends.
type Owner struct {
	// Kind is OwnerSessionSend or OwnerSubagentRun.
	Kind string
	types.NamespacedName
}

// TurnID names the turn of an owner at a step: "<owner UID>/<step>", e.g. "…/round-1".
// Turn ids are the idempotency keys' prefix, so the format never changes.
// It is sessiontools.TurnID, which the session tools use for a send's runId.
func TurnID(owner types.UID, step string) string { return sessiontools.TurnID(owner, step) }

// OwnerUIDOf is the owner UID a turn id starts with.
func OwnerUIDOf(turnID string) types.UID { return sessiontools.OwnerUIDOf(turnID) }

// TurnRequest is one agent turn in one session.
type TurnRequest struct {
	// ID names the turn, e.g. "<owner UID>/round-1". Every message the turn appends carries an
	// idempotency key "<ID>/<step>", so a turn submitted again after a crash appends nothing
	// twice and returns the outcome it had. Submitting an ID that is queued or running is a
	// no-op.
	ID string
	// Namespace and SessionKey name the session the turn runs in (a resolved key, never an
	// alias). The session's AgentSession must exist and have a status.sessionId.
	Namespace  string
	SessionKey string
	// Session and Agent are the session's AgentSession and its Agent as the submitter
	// resolved them (required): the engine looks neither up again.
	Session *sessionsv1alpha1.AgentSession
	Agent   *sessionsv1alpha1.Agent
	// Input is the turn's input message (role user), with provenance when it did not come from
	// the session's own user.
	Input transcript.Message
	// SystemContext is appended to the agent's system prompt for this turn only, e.g. the
	// agent-to-agent context of a send's primary run.
	SystemContext string
	// Deadline aborts the turn when reached; zero means none. An aborted turn marks the
	// session status.abortedLastRun.
	Deadline time.Time
	// Owner is woken when the turn ends.
	Owner Owner
	// TraceParent is the owner's trace (its tracing.Annotation): the turn's span is a child
	// of that root. Empty: the turn starts no trace of its own.
	TraceParent string
	// Compact makes the turn only a compaction step, whatever the trigger (kubectl sessions
	// compact): it has no Input, appends only the compaction record and calls no tools.
	Compact bool
	// RecordOnly makes the turn only record its Input (a person's /send command, role
	// command) in the session's lane: no model is called, no compaction runs, no tool.
	RecordOnly bool
	// ForkFrom, when set, is the session whose recent conversation the turn's session starts
	// from (a spawn with context fork): it is copied before the input (see window/fork.go).
	ForkFrom *ForkSource
}

// ForkSource is the session a forked turn copies the recent conversation of.
type ForkSource = window.ForkSource

// CompactionStepPrefix starts the user message of every compaction step (see
// window.CompactionStepPrefix).
const CompactionStepPrefix = window.CompactionStepPrefix

// TurnResult is the outcome of a finished turn.
type TurnResult struct {
	// Text is the final assistant text (may be empty).
	Text string
	// LastToolResult is the text of the turn's last tool result, if any (the sub-agent
	// announce uses it when Text is empty).
	LastToolResult string
	// ReplySeq and ToolResultSeq are the transcript records of Text and LastToolResult:
	// where a status that keeps only the start of them finds the whole text.
	ReplySeq, ToolResultSeq int64
	InputTokens             int64
	OutputTokens            int64
	// Cost in USD when the provider reports it.
	Cost float64
	// CachedInputTokens are input tokens the provider read from its prompt cache.
	CachedInputTokens int64
	// CostNanos is the turn priced with its Agent's pricing, in 1e-9 of Currency; Currency
	// is empty when the Agent has no pricing.
	CostNanos  int64
	Currency   string
	StopReason string
	// Err is set when the turn failed (provider error, unknown session, tool loop bound).
	Err error
	// Aborted is set when the deadline passed or the turn was cancelled; Err is set too.
	Aborted bool
	// Started and Finished bound the turn's run time (from the engine's clock).
	Started, Finished time.Time
	// Compacted says the turn's compaction step made a compaction record.
	Compacted bool
	// AwaitingApproval names the ToolApproval a tool call of the turn waits on: the turn
	// ended without failing and is submitted again once the approval is decided.
	AwaitingApproval string
}

// Runner is what reconcilers use; *Engine implements it.
type Runner interface {
	// Submit enqueues the turn in its session's lane and returns at once. It fails only for a
	// request that can never run (missing ID, session or owner).
	Submit(ctx context.Context, req TurnRequest) error
	// Result returns the outcome of a finished turn of owner, or false while it is queued,
	// running, or unknown (e.g. after a restart: submit it again).
	Result(owner Owner, id string) (TurnResult, bool)
	// Abort releases everything the engine holds for owner: running turns are cancelled (the
	// model call's context ends), queued ones dropped, outcomes forgotten. Owners call it
	// when they finish, are cancelled, or are deleted. It reports how many turns were queued
	// or running.
	Abort(owner Owner) int
	// Wake returns the channel on which finished turns of owners of this kind are announced
	// (a GenericEvent whose object carries the owner's namespace and name); controllers
	// watch it with source.Channel.
	Wake(kind string) <-chan event.GenericEvent
	// SessionReport returns what the engine reports of a session's turns (counters to
	// refresh, retry state) not yet written to its status; Wake(WakeAgentSession) announces
	// a new one. The engine writes no status: the AgentSession controller does.
	SessionReport(session types.NamespacedName) (SessionReport, bool)
	// ReportWritten tells the engine a report up to seq is in the session's status (or the
	// session is gone): it forgets the report unless a newer one arrived.
	ReportWritten(session types.NamespacedName, seq uint64)
}

// Usage is the turn's usage as internal/usage adds it up.
func (r TurnResult) Usage() usage.Turn {
	return usage.Turn{Input: r.InputTokens, Output: r.OutputTokens, CachedInput: r.CachedInputTokens,
		CostNanos: r.CostNanos, Currency: r.Currency}
}
