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
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The compaction step: before a turn whose context would pass its Agent's trigger, one
// model call folds the previous summary and the older messages into a new summary, appended
// as a compaction record keyed by the turn (a repeated turn reuses it, so a restart neither
// loses nor doubles one). The step has its own deadline; when it fails or times out the turn
// goes on with today's truncation, an Event CompactionFailed says so, and the next turn over
// the trigger tries again. A session's turns run one at a time in its lane, so two
// compactions of one session never overlap.

// ErrCompactionTimeout ends a compaction step that ran past its Agent's timeoutSeconds.
var ErrCompactionTimeout = errors.New("compaction timed out")

// Compaction outcomes, the outcome label of compactionsTotal.
const (
	compactionOK      = "ok"
	compactionFailed  = "failed"
	compactionTimeout = "timeout"
	// compactionRefused: a budget refused the step's model call (budget.ErrExceeded).
	compactionRefused = "refused"
)

// maxFoldRecords bounds the records a compaction step reads before the turn's history.
const maxFoldRecords = 50000

// compactionSystem is the summariser's system prompt.
const compactionSystem = "You compact the older history of a conversation into a summary that replaces it in the " +
	"assistant's context. Keep facts, decisions, commitments, open tasks, names, numbers and what each side asked " +
	"for; drop greetings and repetition. Reply with the summary only."

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

func init() { metrics.Registry.MustRegister(compactionsTotal, compactionTokensSaved) }

// compactionKey is the idempotency key of the turn's compaction record.
func (t *turn) compactionKey() string { return t.req.ID + "/compaction" }

// window is the agent's context window.
func (t *turn) window() int64 {
	if w := t.agent.Spec.Model.ContextTokens; w != nil {
		return *w
	}
	return DefaultContextTokens
}

// turnMessagesRoom is the room the model's view leaves after the history for the turn's own
// messages (its input, a reply, a round of tool calls and results) before it is copied.
const turnMessagesRoom = 4

// fitView sets the model's view from the turn's history view: the latest summary (in the
// request's Summary) and what fits of the messages after it, then the input.
func (t *turn) fitView() {
	in := t.input
	t.msgs = append(assembleContext(t.view, contextBudget(t.window(), t.system, t.tools, &in), turnMessagesRoom), in)
}

// contextTokens estimates the turn's first request with the whole view, nothing dropped.
func (t *turn) contextTokens(v historyView) int64 {
	in := t.input
	w := t.window()
	used := w - w/replyReserveDiv - contextBudget(w, t.system, t.tools, &in)
	return used + summaryTokens(v.summary) + historyTokens(v.tail)
}

// compact runs the compaction step when the turn's context passes the trigger, or always
// in a Compact turn. Only the turn's own interruption is an error: a failed step leaves the
// truncated view.
func (t *turn) compact(ctx context.Context) error {
	cfg := compactionOf(t.agent)
	if _, ok := t.done[t.compactionKey()]; ok {
		t.res.Compacted = true
		return nil
	}
	before := t.contextTokens(t.view)
	if !t.req.Compact && !shouldCompact(cfg, t.window(), before, t.view.complete) {
		return nil
	}
	cctx, cancel := context.WithCancelCause(ctx)
	stop := t.e.cancelAfter(func(error) { cancel(ErrCompactionTimeout) }, cfg.timeout)
	rec, kept, err := t.summarise(cctx, cfg, before)
	stop()
	cancel(nil)
	if cause := interruption(ctx); cause != nil {
		return cause
	}
	if err != nil {
		t.compactionFailed(ctx, cctx, err)
		if t.req.Compact && errors.Is(err, budget.ErrExceeded) {
			return err // a compaction asked for alone ends refused, and its owner says why
		}
		return nil
	}
	if rec == nil {
		return nil
	}
	t.view = historyView{summary: rec, tail: kept, complete: true}
	t.fitView()
	t.res.Compacted = true
	c := rec.Message.Compaction
	compactionsTotal.WithLabelValues(compactionOK).Inc()
	compactionTokensSaved.Add(float64(max(0, c.TokensBefore-c.TokensAfter)))
	return nil
}

// summarise folds the older part of the view into a new compaction record, appended; nil
// when there is nothing to fold. kept are the records that stay verbatim after it.
func (t *turn) summarise(ctx context.Context, cfg compactionConfig, before int64) (*transcript.Record, []transcript.Record, error) {
	k := splitFold(t.view.tail, cfg.keepRecent)
	prev, fold := t.view.summary, t.view.tail[:k]
	foldBytes := int(4 * (t.window() - t.window()/replyReserveDiv -
		estimateTokens(len(compactionSystem)+len(cfg.instructions)+len(summaryText(prev)))))
	if !t.view.complete {
		older, summary, err := t.readOlder(ctx, prev, foldBytes)
		if err != nil {
			return nil, nil, err
		}
		prev, fold = summary, append(older, fold...)
	}
	if historyTokens(fold) == 0 {
		return nil, nil, nil
	}
	// The range starts after the previous summary's, or at the start: whatever older
	// records the fold could not read had been dropped from every turn already.
	from := int64(1)
	if prev != nil {
		from = prev.Message.Compaction.ToSeq + 1
	}
	var prevText string
	if prev != nil {
		prevText = messageText(&prev.Message)
	}
	system := compactionSystem
	if cfg.instructions != "" {
		system += "\n\n" + cfg.instructions
	}
	maxTokens := min(t.window()/replyReserveDiv, maxSummaryTokens)
	resp, err := t.callModel(t.e.observeRetries(ctx, t), budget.PurposeCompaction, provider.Request{
		Model:     cmp.Or(cfg.model, t.session.Spec.Model),
		System:    system,
		Messages:  []provider.Message{{Role: provider.RoleUser, Text: compactionInput(prevText, fold, foldBytes)}},
		MaxTokens: int(maxTokens),
	})
	if err != nil {
		return nil, nil, err
	}
	if resp.Text == "" {
		return nil, nil, errors.New("the model returned an empty summary")
	}
	resp.Text = textutil.Truncate(resp.Text, int(4*maxTokens))
	msg := assistantMessage(resp, t.prov.Name(), t.agent.Spec.Model.Pricing, "")
	msg.Role, msg.StopReason = transcript.RoleCompaction, ""
	msg.Content = []transcript.ContentBlock{{Type: transcript.BlockText, Text: resp.Text}}
	msg.Model = cmp.Or(resp.Model, cfg.model, t.session.Spec.Model, t.agent.Spec.Model.Name)
	kept := t.view.tail[k:]
	summary := &transcript.Record{Message: msg}
	msg.Compaction = &transcript.Compaction{FromSeq: from, ToSeq: fold[len(fold)-1].Seq, TokensBefore: before,
		TokensAfter: t.contextTokens(historyView{summary: summary, tail: kept})}
	recs, err := t.e.opts.Store.Append(ctx, t.req.Namespace, t.session.Status.SessionID,
		transcript.AppendRequest{IdempotencyKey: t.compactionKey(), Message: msg})
	if err != nil {
		return nil, nil, fmt.Errorf("appending the compaction record: %w", err)
	}
	t.noteAppended(recs)
	rec := recs[0]
	t.res.add(rec.Message.Usage)
	countModelUsage(t.req.Namespace, t.agent.Name, rec.Message.Model, rec.Message.Usage)
	return &rec, kept, nil
}

// readOlder reads the records before the turn's history back to the latest summary (or
// the transcript's start), at most budget bytes of them: older ones are left out (they had
// been dropped from every turn already). It returns them and the summary it found.
func (t *turn) readOlder(ctx context.Context, summary *transcript.Record, budget int) ([]transcript.Record, *transcript.Record, error) {
	var stop int64
	if summary != nil {
		stop = summary.Message.Compaction.ToSeq
	}
	before := t.view.first
	var pages [][]transcript.Record
	read, bytes := 0, 0
	for before > stop+1 && read < maxFoldRecords && bytes < budget {
		page, err := t.e.opts.Store.Read(ctx, t.req.Namespace, t.session.Status.SessionID,
			transcript.ReadOptions{Limit: transcript.MaxLimit, BeforeSeq: before, AfterSeq: stop, IncludeTools: true})
		if err != nil {
			return nil, nil, fmt.Errorf("reading older history: %w", err)
		}
		recs := page.Messages
		if len(recs) == 0 {
			break
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if r := &recs[i]; r.Message.Role == transcript.RoleCompaction && r.Message.Compaction != nil && summary == nil {
				summary, stop = r, r.Message.Compaction.ToSeq
				recs = recs[i+1:]
				break
			}
		}
		for i := range recs {
			bytes += len(recordLine(&recs[i]))
		}
		read += len(recs)
		pages = append(pages, recs)
		before = page.Messages[0].Seq
		if !page.HasMore {
			break
		}
	}
	var older []transcript.Record
	for i := len(pages) - 1; i >= 0; i-- {
		for _, r := range pages[i] {
			if r.Seq > stop && r.Message.Role != transcript.RoleCompaction {
				older = append(older, r)
			}
		}
	}
	return older, summary, nil
}

// compactionFailed records a failed, timed-out or refused step: a metric, a log line and
// an Event on the session (reason BudgetExceeded when a budget refused its model call). The turn goes on truncated; the next turn over the trigger tries again.
func (t *turn) compactionFailed(ctx, cctx context.Context, err error) {
	outcome, reason := compactionFailed, "CompactionFailed"
	switch {
	case errors.Is(context.Cause(cctx), ErrCompactionTimeout):
		outcome, err = compactionTimeout, ErrCompactionTimeout
	case errors.Is(err, budget.ErrExceeded):
		outcome, reason = compactionRefused, v1.ReasonBudgetExceeded
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
