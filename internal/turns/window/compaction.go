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
	"strconv"
	"strings"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
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

// Defaults of Agent.spec.memory.compaction (the CRD defaults the fields to the same values).
const (
	DefaultCompactionTriggerRatio = 0.8
	DefaultKeepRecentMessages     = 20
	DefaultCompactionTimeout      = 120 * time.Second

	// CompactionStepPrefix starts the user message of every compaction step, fixed so that
	// scripted agents and people can match it.
	CompactionStepPrefix = "Compaction step."
	// summaryPreamble introduces the summary where the model reads it.
	summaryPreamble = "Summary of the earlier conversation (older messages were compacted into it):\n"
	// maxSummaryTokens bounds a summary, whatever the window: a model that answers at
	// length cannot make the summary the larger part of every later request.
	maxSummaryTokens = 8192
)

// compactionConfig is an Agent's compaction settings with the defaults applied.
type compactionConfig struct {
	enabled      bool
	triggerRatio float64
	keepRecent   int
	model        string
	timeout      time.Duration
	instructions string
}

func compactionOf(agent *sessionsv1alpha1.Agent) compactionConfig {
	c := &agent.Spec.Memory.Compaction
	cfg := compactionConfig{enabled: true, triggerRatio: DefaultCompactionTriggerRatio, keepRecent: DefaultKeepRecentMessages,
		model: c.Model, timeout: DefaultCompactionTimeout, instructions: c.Instructions}
	if c.Enabled != nil {
		cfg.enabled = *c.Enabled
	}
	if c.TriggerRatio != nil && *c.TriggerRatio > 0 {
		cfg.triggerRatio = *c.TriggerRatio
	}
	if c.KeepRecentMessages != nil && *c.KeepRecentMessages >= 0 {
		cfg.keepRecent = int(*c.KeepRecentMessages)
	}
	if c.TimeoutSeconds != nil && *c.TimeoutSeconds > 0 {
		cfg.timeout = time.Duration(*c.TimeoutSeconds) * time.Second
	}
	return cfg
}

// summaryText is how the model reads a summary record, "" for none.
func summaryText(r *transcript.Record) string {
	if r == nil {
		return ""
	}
	return summaryPreamble + messageText(&r.Message)
}

// shouldCompact says whether a turn compacts first: its context would pass the trigger
// share of the window, or its history does not reach back to the latest summary (the
// messages in between would otherwise be dropped without a trace).
func shouldCompact(cfg compactionConfig, window, contextTokens int64, complete bool) bool {
	if !cfg.enabled {
		return false
	}
	return !complete || float64(contextTokens) > cfg.triggerRatio*float64(window)
}

// splitFold is where the verbatim part of tail starts: at the newest keep model messages,
// moved back so that tool results are never separated from the call that asked for them.
func splitFold(tail []transcript.Record, keep int) int {
	k := len(tail)
	for n := 0; k > 0 && n < keep; {
		k--
		if _, ok := ToProvider(&tail[k].Message); ok {
			n++
		}
	}
	for k > 0 && k < len(tail) && tail[k].Message.Role == transcript.RoleToolResult {
		k--
	}
	return k
}

// compactionInput is the compaction step's user message: the fixed prefix, the previous
// summary, then the newest of fold that fit in budget bytes, one labelled line each (older
// ones are covered by the new summary's range but not read: they had been dropped already).
func compactionInput(prev string, fold []transcript.Record, budget int) string {
	lines := make([]string, 0, len(fold))
	used := 0
	for i := len(fold) - 1; i >= 0; i-- {
		line := recordLine(&fold[i])
		if line == "" {
			continue
		}
		if used+len(line)+1 > budget {
			break
		}
		used += len(line) + 1
		lines = append(lines, line)
	}
	var b strings.Builder
	b.Grow(len(CompactionStepPrefix) + len(prev) + used + 128)
	b.WriteString(CompactionStepPrefix)
	b.WriteString(" Fold the previous summary and the messages below into one summary of the conversation so far.\n")
	if prev != "" {
		b.WriteString("Previous summary:\n")
		b.WriteString(prev)
		b.WriteString("\n")
	}
	b.WriteString("Messages:\n")
	for i := len(lines) - 1; i >= 0; i-- {
		b.WriteString(lines[i])
		b.WriteByte('\n')
	}
	return b.String()
}

// recordLine is one message of a fold as the summariser reads it; "" for records the model
// never sees.
func recordLine(r *transcript.Record) string {
	m, ok := ToProvider(&r.Message)
	if !ok {
		return ""
	}
	var b strings.Builder
	b.WriteString("[" + strconv.FormatInt(r.Seq, 10) + "] " + string(m.Role))
	if m.ToolName != "" {
		b.WriteString(" " + m.ToolName)
	}
	b.WriteString(": " + m.Text)
	for _, tc := range m.ToolCalls {
		b.WriteString(" [call " + tc.Name + " " + string(tc.Arguments) + "]")
	}
	return b.String()
}
