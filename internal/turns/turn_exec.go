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
	"strconv"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns/window"
)

// MaxToolIterations bounds the model calls of one turn; a model still asking for tools
// after that many ends the turn with ErrToolLoop.
const MaxToolIterations = 16

// turn is the state of one running turn.
type turn struct {
	e       *Engine
	req     *TurnRequest
	session *sessionsv1alpha1.AgentSession
	agent   *sessionsv1alpha1.Agent
	prov    provider.Provider

	system string
	tools  []provider.Tool
	// offered are the tools of this turn by name: a call of any other is an error result.
	offered map[string]*tool
	// win is the turn's context: its history as the model sees it, fitted to the context
	// window, and its records already in the transcript (a repeated turn: win.Done, whose
	// steps are not run again, their content reused).
	win *window.Window
	// msgs is what the model sees: the window's messages, then this turn's.
	msgs []provider.Message
	// pending are appended together at the next flush: one durable append before tools run
	// and one at the end, not one per message.
	pending []transcript.AppendRequest
	step    int

	lastInput int64 // input tokens of the last model call: the context size
	res       TurnResult

	// yielded is set by a successful sessions_yield: the turn ends after its round of tools.
	yielded bool
}

// runTurn runs one turn to its end; the caller ends it (end: it is recorded, its owner
// woken, its session told).
func (e *Engine) runTurn(ctx context.Context, req *TurnRequest) *turn {
	turnsRunning.Inc()
	defer turnsRunning.Dec()
	t := &turn{e: e, req: req, res: TurnResult{Started: e.now()}}
	ctx, span := startTurnSpan(ctx, req)
	defer func() { endTurnSpan(span, t) }()
	err := t.prepare(ctx)
	if err == nil {
		var stop func()
		ctx, stop = e.withTurnDeadline(ctx, t.agent)
		defer stop()
		// The input is durable before the model is called: history shows what a running
		// turn works on, and an interrupted turn keeps its input.
		err = t.flush(ctx)
	}
	if err == nil {
		err = t.win.Verify(ctx)
		t.msgs = t.win.Messages()
	}
	if err == nil && !req.RecordOnly {
		err = t.compact(ctx)
	}
	if err == nil && !req.Compact && !req.RecordOnly {
		err = t.awaitOutcome(t.loop(ctx))
	}
	if ferr := t.flush(context.WithoutCancel(ctx)); err == nil {
		err = ferr
	}
	t.res.Finished = e.now()
	if cause := interruption(ctx); cause != nil && err != nil {
		t.res.Aborted = true
		if !errors.Is(err, cause) {
			err = fmt.Errorf("%w: %v", cause, err)
		}
	}
	t.res.Err = err
	return t
}

// abortedBeforeStart is the outcome of a turn cancelled while it waited in its lane.
func (e *Engine) abortedBeforeStart(req *TurnRequest, cause error) *turn {
	now := e.now()
	return &turn{e: e, req: req, session: req.Session, res: TurnResult{Started: now, Finished: now, Err: cause, Aborted: true}}
}

// interruption returns the reason ctx was cancelled, or nil while it is live.
func interruption(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrDeadline) || errors.Is(cause, ErrAborted) || errors.Is(cause, ErrShutdown) {
		return cause
	}
	return ErrAborted
}

// prepare builds the provider for the session and Agent the request brings, has the turn's
// window built (its history, its fork, its input queued), and takes what it queued.
func (t *turn) prepare(ctx context.Context) error {
	e, req := t.e, t.req
	s := req.Session
	t.session, t.agent = s, req.Agent
	if s.Status.SessionID == "" {
		return fmt.Errorf("session %q has no sessionId yet", req.SessionKey)
	}
	wr := window.Request{Namespace: req.Namespace, SessionID: s.Status.SessionID, Turn: req.ID, Agent: t.agent,
		Model: s.Spec.Model, Input: req.Input, SystemContext: req.SystemContext, Compact: req.Compact}
	// A RecordOnly turn asks nothing of a model: its provider is not built (nor its key read).
	if !req.RecordOnly {
		var err error
		if t.prov, err = e.provider(ctx, t.agent); err != nil {
			return err
		}
		t.system = t.agent.Spec.SystemPrompt
		if req.SystemContext != "" {
			if t.system != "" {
				t.system += "\n\n"
			}
			t.system += req.SystemContext
		}
		t.tools, t.offered = e.tools.forTurn(ctx, t.agent, s)
		wr.System, wr.Tools, wr.ForkFrom = t.system, t.tools, req.ForkFrom
	}
	w, err := e.windows.Build(ctx, wr)
	if err != nil {
		return err
	}
	t.win, t.msgs, t.pending = w, w.Messages(), w.Queue
	return nil
}

// key is the idempotency key of the current step.
func (t *turn) key() string { return t.req.ID + "/" + strconv.Itoa(t.step) }

// reuse returns the message already recorded for the current step, or queues m for it.
func (t *turn) reuse(m transcript.Message) transcript.Message {
	k := t.key()
	if r, ok := t.win.Done[k]; ok {
		t.noteSeq(&r)
		return r.Message
	}
	t.pending = append(t.pending, transcript.AppendRequest{IdempotencyKey: k, Message: m})
	return m
}

// flush appends the pending messages. When the store already had a key (a turn repeated
// after a crash), the stored record wins, so the repeated turn has the first one's outcome;
// flush returns the stored version of the last pending message.
func (t *turn) flush(ctx context.Context) error {
	if len(t.pending) == 0 || t.session == nil {
		return nil
	}
	recs, err := t.e.opts.Store.Append(ctx, t.req.Namespace, t.session.Status.SessionID, t.pending...)
	t.pending = t.pending[:0]
	if err != nil {
		return fmt.Errorf("appending to transcript: %w", err)
	}
	t.win.Appended(recs)
	for i := range recs {
		t.noteSeq(&recs[i])
	}
	if len(recs) > 0 {
		last := &recs[len(recs)-1]
		if last.Message.Role == transcript.RoleAssistant {
			t.noteAssistant(&last.Message, true)
		}
	}
	return nil
}

// noteSeq remembers where the turn's latest reply and tool result are in the transcript.
func (t *turn) noteSeq(r *transcript.Record) {
	switch r.Message.Role {
	case transcript.RoleAssistant:
		t.res.ReplySeq = r.Seq
	case transcript.RoleToolResult:
		t.res.ToolResultSeq = r.Seq
	}
}

// loop calls the model and runs the tools it asks for, MaxToolIterations times at most.
func (t *turn) loop(ctx context.Context) error {
	for range MaxToolIterations {
		t.step++
		var msg transcript.Message
		if r, ok := t.win.Done[t.key()]; ok {
			t.noteSeq(&r)
			msg = r.Message
		} else {
			began := t.e.now()
			cctx, cspan := startChatSpan(ctx, t)
			lctx, flushLive := t.e.liveReply(t.e.observeRetries(cctx, t), t)
			resp, err := t.callModel(lctx, budget.PurposeTurn, provider.Request{
				Model:    t.session.Spec.Model,
				System:   t.system,
				Summary:  t.win.Summary(),
				Messages: t.msgs,
				Tools:    t.tools,
				Thinking: string(t.session.Spec.ThinkingLevel),
			})
			flushLive()
			modelCallDuration.WithLabelValues(t.prov.Name(), outcome(err != nil)).Observe(t.e.now().Sub(began).Seconds())
			endChatSpan(cspan, resp, err)
			if err != nil {
				return err
			}
			msg = t.reuse(assistantMessage(resp, t.prov.Name(), t.agent.Spec.Model.Pricing, t.session.Spec.ThinkingLevel))
			countModelUsage(t.req.Namespace, t.agent.Name, cmp.Or(msg.Model, t.agent.Spec.Model.Name, t.prov.Name()), msg.Usage)
		}
		calls := t.noteAssistant(&msg, false)
		if len(calls) == 0 {
			return nil
		}
		// The call must be durable before its effects (objects created by tools).
		if err := t.flush(ctx); err != nil {
			return err
		}
		last := &t.msgs[len(t.msgs)-1]
		for i := range last.ToolCalls {
			if err := t.callTool(ctx, &last.ToolCalls[i]); err != nil {
				return err
			}
		}
		if t.yielded {
			t.res.StopReason = StopReasonYield
			return nil
		}
	}
	t.res.StopReason = provider.StopReasonToolCalls
	return fmt.Errorf("%w: the model asked for tools after %d calls", ErrToolLoop, MaxToolIterations)
}

// noteAssistant puts an assistant message into the model's view and the result; replace
// swaps it for the stored version after a flush. It returns the message's tool calls.
func (t *turn) noteAssistant(m *transcript.Message, replace bool) []provider.ToolCall {
	pm, _ := window.ToProvider(m)
	if replace {
		if n := len(t.msgs); n > 0 && t.msgs[n-1].Role == provider.RoleAssistant {
			t.msgs[n-1] = pm
		}
		t.res.Text = pm.Text
		return pm.ToolCalls
	}
	t.msgs = append(t.msgs, pm)
	t.res.Text, t.res.StopReason = pm.Text, m.StopReason
	if u := m.Usage; u != nil {
		t.res.add(u)
		t.lastInput = u.Input
	}
	return pm.ToolCalls
}

// add counts the usage of one model call of the turn.
func (r *TurnResult) add(u *transcript.Usage) {
	r.InputTokens += u.Input
	r.OutputTokens += u.Output
	r.Cost += u.Cost
	r.CachedInputTokens += u.CachedInput
	if u.Currency != "" {
		r.CostNanos += u.CostNanos
		r.Currency = u.Currency
	}
}

// callTool runs one tool call (unless a repeated turn already has its result) and queues
// its result.
func (t *turn) callTool(ctx context.Context, call *provider.ToolCall) error {
	t.step++
	var msg transcript.Message
	if r, ok := t.win.Done[t.key()]; ok {
		t.noteSeq(&r)
		msg = r.Message
	} else {
		text, isErr, gated, err := t.gate(ctx, call)
		if err != nil {
			return err
		}
		if !gated {
			text, isErr = t.e.tools.run(ctx, t, call)
		}
		if err := interruption(ctx); err != nil {
			return err
		}
		msg = t.reuse(toolResultMessage(call, text, isErr))
		if gated { // a decided call's result is durable at once: it never runs twice
			if err := t.flush(ctx); err != nil {
				return err
			}
		}
	}
	t.yielded = t.yielded || yields(&msg)
	pm, _ := window.ToProvider(&msg)
	t.msgs = append(t.msgs, pm)
	t.res.LastToolResult = pm.Text
	return nil
}
