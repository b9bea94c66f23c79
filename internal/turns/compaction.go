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
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns/window"
)

// The compaction stage of a turn: its window decides whether the turn compacts first and
// what to fold (internal/turns/window); the turn makes the summary's model call through
// callModel, counts the step and, when it fails, says so in an Event.

// Compaction outcomes, the outcome label of compactionsTotal.
const (
	compactionOK      = "ok"
	compactionFailed  = "failed"
	compactionTimeout = "timeout"
	// compactionRefused: a budget refused the step's model call (budget.ErrExceeded).
	compactionRefused = "refused"
)

var (
	compactionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_sessions_compactions_total",
		Help: "Compaction steps, by outcome (ok, failed, timeout, refused by a budget).",
	}, []string{"outcome"})
	compactionTokensSaved = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "agent_sessions_compaction_tokens_saved_total",
		Help: "Estimated context tokens that compactions removed from the turns that ran them (before less after).",
	})
)

// compact runs the compaction step when the turn's context passes the trigger, or always
// in a Compact turn. Only the turn's own interruption is an error: a failed step leaves the
// truncated view.
func (t *turn) compact(ctx context.Context) error {
	c, err := t.win.Compact(ctx, t.summarise)
	if c.Earlier {
		t.res.Compacted = true
		return nil
	}
	if rec := c.Record; rec != nil {
		t.res.add(rec.Message.Usage)
		countModelUsage(t.req.Namespace, t.agent.Name, rec.Message.Model, rec.Message.Usage)
	}
	if err == nil && c.Record == nil {
		return nil
	}
	if cause := interruption(ctx); cause != nil {
		return cause
	}
	if err != nil {
		t.compactionFailed(ctx, err)
		if t.req.Compact && errors.Is(err, budget.ErrExceeded) {
			return err // a compaction asked for alone ends refused, and its owner says why
		}
		return nil
	}
	t.msgs = t.win.Messages()
	t.res.Compacted = true
	m := c.Record.Message.Compaction
	compactionsTotal.WithLabelValues(compactionOK).Inc()
	compactionTokensSaved.Add(float64(max(0, m.TokensBefore-m.TokensAfter)))
	return nil
}

// summarise is the compaction step's model call (window.Summarise): judged and charged by
// callModel like the turn's own, its answer priced with the turn's Agent.
func (t *turn) summarise(ctx context.Context, req provider.Request) (transcript.Message, error) {
	resp, err := t.callModel(t.e.observeRetries(ctx, t), budget.PurposeCompaction, req)
	if err != nil {
		return transcript.Message{}, err
	}
	return assistantMessage(resp, t.prov.Name(), t.agent.Spec.Model.Pricing, ""), nil
}

// compactionFailed records a failed, timed-out or refused step: a metric, a log line and
// an Event on the session (reason BudgetExceeded when a budget refused its model call). The turn goes on truncated; the next turn over the trigger tries again.
func (t *turn) compactionFailed(ctx context.Context, err error) {
	outcome, reason := compactionFailed, "CompactionFailed"
	switch {
	case errors.Is(err, window.ErrCompactionTimeout):
		outcome = compactionTimeout
	case errors.Is(err, budget.ErrExceeded):
		outcome, reason = compactionRefused, sessionsv1alpha1.ReasonBudgetExceeded
	}
	compactionsTotal.WithLabelValues(outcome).Inc()
	ctrl.LoggerFrom(ctx).V(2).Info("compaction failed", "turn", t.req.ID, "session", t.req.SessionKey,
		"namespace", t.req.Namespace, "outcome", outcome, "error", err.Error())
	if r := t.e.opts.Recorder; r != nil {
		then := "the turn went on with truncated history"
		if t.req.Compact {
			then = "nothing was compacted"
		}
		r.Eventf(t.session, nil, corev1.EventTypeWarning, reason, "Compact",
			"compaction in turn %s: %s; %s", t.req.ID, textutil.Truncate(err.Error(), maxEventError), then)
	}
}
