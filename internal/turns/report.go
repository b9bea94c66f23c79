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
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// WakeAgentSession is the kind of Wake whose events name sessions with a new report: the
// AgentSession controller watches it and writes the report into the session's status.
const WakeAgentSession = "AgentSession"

// DefaultMaxReports bounds the sessions the engine holds an unwritten report for; past it a
// new report displaces an old one (the controller re-reads the counters from the transcript
// at the next turn anyway).
const DefaultMaxReports = 4096

// SessionReport is what the engine knows of a session's turns that its status shows and its
// controller has not written yet. The engine never writes status: it keeps this and wakes
// the AgentSession controller, which writes it with the rest of the status in one write.
type SessionReport struct {
	// Seq grows with every change; ReportWritten forgets the report only if it is unchanged.
	Seq uint64
	// TurnEnded is set when a turn ended since the last written report: the session's
	// counters (messages, tokens, usage, preview) are to be read again from its transcript.
	TurnEnded bool
	// AbortedLastRun is whether the last turn that ended was aborted (deadline, cancel).
	AbortedLastRun bool
	// ContextTokens is the input tokens of the last model call (the context size); 0: none.
	ContextTokens int64
	// Retry is the ModelRetrying condition of the session's latest model call that reported
	// retries; nil: none since the last written report. It is authoritative: the controller
	// sets it over whatever its cache holds.
	Retry *metav1.Condition
}

// reports holds the engine's unwritten session reports. Guarded by Engine.mu.
type reports map[types.NamespacedName]*SessionReport

// SessionReport implements Runner.
func (e *Engine) SessionReport(key types.NamespacedName) (SessionReport, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.reports[key]
	if !ok {
		return SessionReport{}, false
	}
	out := *r
	if r.Retry != nil {
		c := *r.Retry
		out.Retry = &c
	}
	return out, true
}

// ReportWritten implements Runner.
func (e *Engine) ReportWritten(key types.NamespacedName, seq uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.reports[key]; ok && r.Seq == seq {
		delete(e.reports, key)
	}
}

// report applies edit to key's report and wakes the session's controller.
func (e *Engine) report(key types.NamespacedName, edit func(*SessionReport)) {
	e.mu.Lock()
	r, ok := e.reports[key]
	if !ok {
		if len(e.reports) >= DefaultMaxReports {
			for k := range e.reports { // any one: the bound is a safety net, not a policy
				delete(e.reports, k)
				break
			}
		}
		r = &SessionReport{}
		e.reports[key] = r
	}
	e.seq++
	r.Seq = e.seq
	edit(r)
	ch := e.wakeLocked(WakeAgentSession)
	e.mu.Unlock()
	e.send(ch, sessionObject(key))
}

// reportTurn reports a finished turn to its session: counters to refresh, whether it was
// aborted, and its context size.
func (e *Engine) reportTurn(t *turn) {
	// A turn cut by the manager's shutdown is submitted again after the restart; it has not
	// failed, so the session is left as it is.
	if t.session == nil || errors.Is(t.res.Err, ErrShutdown) {
		return
	}
	e.report(types.NamespacedName{Namespace: t.session.Namespace, Name: t.session.Name}, func(r *SessionReport) {
		r.TurnEnded, r.AbortedLastRun = true, t.res.Aborted
		if t.lastInput > 0 {
			r.ContextTokens = t.lastInput
		}
	})
}
