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

package window

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The compaction step: before a turn whose context would pass its Agent's trigger, one
// model call folds the previous summary and the older messages into a new summary, appended
// as a compaction record keyed by the turn (a repeated turn reuses it, so a restart neither
// loses nor doubles one). The step has its own deadline; when it fails or times out the turn
// goes on with today's truncation (the turn says so: an Event CompactionFailed), and the next
// turn over the trigger tries again. A session's turns run one at a time in its lane, so two
// compactions of one session never overlap. The window decides and folds; the turn makes
// the model call (Summarise), judged and charged as every other.

// ErrCompactionTimeout ends a compaction step that ran past its Agent's timeoutSeconds.
var ErrCompactionTimeout = errors.New("compaction timed out")

// maxFoldRecords bounds the records a compaction step reads before the turn's history.
const maxFoldRecords = 50000

// compactionSystem is the summariser's system prompt.
const compactionSystem = "You compact the older history of a conversation into a summary that replaces it in the " +
	"assistant's context. Keep facts, decisions, commitments, open tasks, names, numbers and what each side asked " +
	"for; drop greetings and repetition. Reply with the summary only."

// Summarise asks the model for a compaction step's summary and returns its answer as a
// transcript message, its usage priced: the turn's model call, judged and charged as every
// other (the window calls no model itself).
type Summarise func(ctx context.Context, req provider.Request) (transcript.Message, error)

// Compaction is what a compaction step did.
type Compaction struct {
	// Record is the turn's compaction record; nil when it made none (not due, nothing to
	// fold, or failed).
	Record *transcript.Record
	// Earlier says the turn made Record when it ran before (a repeat): no model was asked.
	Earlier bool
}

// compactionKey is the idempotency key of the turn's compaction record.
func (w *Window) compactionKey() string { return w.req.Turn + "/compaction" }

// size is the agent's context window, in tokens.
func (w *Window) size() int64 {
	if s := w.req.Agent.Spec.Model.ContextTokens; s != nil {
		return *s
	}
	return DefaultContextTokens
}

// turnMessagesRoom is the room the model's view leaves after the history for the turn's own
// messages (its input, a reply, a round of tool calls and results) before it is copied.
const turnMessagesRoom = 4

// fit sets the model's view from the window's history view: the latest summary (in the
// request's Summary) and what fits of the messages after it, then the input.
func (w *Window) fit() {
	in := w.input
	w.msgs = append(assembleContext(w.view, contextBudget(w.size(), w.req.System, w.req.Tools, &in), turnMessagesRoom), in)
}

// contextTokens estimates the turn's first request with the whole view, nothing dropped.
func (w *Window) contextTokens(v historyView) int64 {
	in := w.input
	s := w.size()
	used := s - s/replyReserveDiv - contextBudget(s, w.req.System, w.req.Tools, &in)
	return used + summaryTokens(v.summary) + historyTokens(v.tail)
}

// Compact runs the compaction step when the turn's context passes the trigger, or always
// in a Compact turn, under the Agent's compaction timeout (ErrCompactionTimeout). It asks
// summarise for the summary, appends the compaction record and fits the view anew from it
// (Messages). A failed step leaves the truncated view.
func (w *Window) Compact(ctx context.Context, summarise Summarise) (Compaction, error) {
	if r, ok := w.Done[w.compactionKey()]; ok {
		made := r // declared here, it is allocated only when the turn made one before
		return Compaction{Record: &made, Earlier: true}, nil
	}
	cfg := compactionOf(w.req.Agent)
	before := w.contextTokens(w.view)
	if !w.req.Compact && !shouldCompact(cfg, w.size(), before, w.view.complete) {
		return Compaction{}, nil
	}
	cctx, cancel := context.WithCancelCause(ctx)
	timer := w.src.clock.AfterFunc(cfg.timeout, func() { cancel(ErrCompactionTimeout) })
	rec, kept, err := w.summarise(cctx, summarise, cfg, before)
	timer.Stop()
	cancel(nil)
	if err != nil {
		if errors.Is(context.Cause(cctx), ErrCompactionTimeout) {
			err = ErrCompactionTimeout
		}
		return Compaction{}, err
	}
	if rec == nil {
		return Compaction{}, nil
	}
	w.view = historyView{summary: rec, tail: kept, complete: true}
	w.fit()
	return Compaction{Record: rec}, nil
}

// summarise folds the older part of the view into a new compaction record, appended; nil
// when there is nothing to fold. kept are the records that stay verbatim after it.
func (w *Window) summarise(ctx context.Context, summarise Summarise, cfg compactionConfig, before int64) (*transcript.Record, []transcript.Record, error) {
	k := splitFold(w.view.tail, cfg.keepRecent)
	prev, fold := w.view.summary, w.view.tail[:k]
	size := w.size()
	foldBytes := int(4 * (size - size/replyReserveDiv -
		estimateTokens(len(compactionSystem)+len(cfg.instructions)+len(summaryText(prev)))))
	if !w.view.complete {
		older, summary, err := w.readOlder(ctx, prev, foldBytes)
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
	maxTokens := min(size/replyReserveDiv, maxSummaryTokens)
	msg, err := summarise(ctx, provider.Request{
		Model:     cmp.Or(cfg.model, w.req.Model),
		System:    system,
		Messages:  []provider.Message{{Role: provider.RoleUser, Text: compactionInput(prevText, fold, foldBytes)}},
		MaxTokens: int(maxTokens),
	})
	if err != nil {
		return nil, nil, err
	}
	text := messageText(&msg)
	if text == "" {
		return nil, nil, errors.New("the model returned an empty summary")
	}
	msg.Role, msg.StopReason = transcript.RoleCompaction, ""
	msg.Content = []transcript.ContentBlock{{Type: transcript.BlockText, Text: textutil.Truncate(text, int(4*maxTokens))}}
	msg.Model = cmp.Or(msg.Model, cfg.model, w.req.Model, w.req.Agent.Spec.Model.Name)
	kept := w.view.tail[k:]
	summary := &transcript.Record{Message: msg}
	msg.Compaction = &transcript.Compaction{FromSeq: from, ToSeq: fold[len(fold)-1].Seq, TokensBefore: before,
		TokensAfter: w.contextTokens(historyView{summary: summary, tail: kept})}
	recs, err := w.src.store.Append(ctx, w.req.Namespace, w.req.SessionID,
		transcript.AppendRequest{IdempotencyKey: w.compactionKey(), Message: msg})
	if err != nil {
		return nil, nil, fmt.Errorf("appending the compaction record: %w", err)
	}
	w.Appended(recs)
	rec := recs[0]
	return &rec, kept, nil
}

// readOlder reads the records before the turn's history back to the latest summary (or
// the transcript's start), at most budget bytes of them: older ones are left out (they had
// been dropped from every turn already). It returns them and the summary it found.
func (w *Window) readOlder(ctx context.Context, summary *transcript.Record, budget int) ([]transcript.Record, *transcript.Record, error) {
	var stop int64
	if summary != nil {
		stop = summary.Message.Compaction.ToSeq
	}
	before := w.view.first
	var pages [][]transcript.Record
	read, bytes := 0, 0
	for before > stop+1 && read < maxFoldRecords && bytes < budget {
		page, err := w.src.store.Read(ctx, w.req.Namespace, w.req.SessionID,
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
