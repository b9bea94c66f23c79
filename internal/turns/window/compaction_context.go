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
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

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

func compactionOf(agent *v1.Agent) compactionConfig {
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

// historyView is a turn's history as compaction sees it: the latest summary and the
// records after its range.
type historyView struct {
	// summary is the latest compaction record, nil when the session has none.
	summary *transcript.Record
	// tail are the records after the summary's range (all when there is no summary), a
	// part of the records read: compaction records among them are never sent (ToProvider
	// skips them) nor folded.
	tail []transcript.Record
	// complete says tail holds every record after the summary's range: the records read
	// reach back to it (or to the transcript's start).
	complete bool
	// msgs, when set, is tail as the model sees it, message i for record i (the zero
	// message for a record it never sees): the history cache's, converted once.
	msgs []provider.Message
	// first is the seq of the oldest record read (0: none).
	first int64
}

// viewHistory finds the latest summary in history (records in seq order, the oldest read
// being first) or takes own, the summary this turn already made (a repeated turn).
func viewHistory(history []transcript.Record, first int64, own *transcript.Record) historyView {
	v := historyView{summary: own, first: first}
	if v.summary == nil {
		for i := len(history) - 1; i >= 0; i-- {
			if history[i].Message.Role == transcript.RoleCompaction && history[i].Message.Compaction != nil {
				v.summary = &history[i]
				break
			}
		}
	}
	var after int64
	if v.summary != nil {
		after = v.summary.Message.Compaction.ToSeq
	}
	v.tail = history[sort.Search(len(history), func(i int) bool { return history[i].Seq > after }):]
	v.complete = len(history) == 0 || first <= after+1
	return v
}

// summaryTokens estimates what summaryText(r) takes of the context, without building it.
func summaryTokens(r *transcript.Record) int64 {
	if r == nil {
		return 0
	}
	return estimateTokens(len(summaryPreamble) + messageTextLen(&r.Message))
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

// historyTokens estimates what the model messages of recs take of the context.
func historyTokens(recs []transcript.Record) int64 {
	var n int64
	for i := range recs {
		if b, ok := modelBytes(&recs[i].Message); ok {
			n += estimateTokens(b)
		}
	}
	return n
}

// providerHistory is the model's view of recs, with room for extra more messages (the
// turn's input, the model's replies and tool results).
func providerHistory(recs []transcript.Record, extra int) []provider.Message {
	out := make([]provider.Message, 0, len(recs)+extra)
	for i := range recs {
		if m, ok := ToProvider(&recs[i].Message); ok {
			out = append(out, m)
		}
	}
	return out
}

// assembleContext is the history a turn's model sees: what fits of the messages after the
// summary's range, within budget less the summary (which the request carries on its own),
// in a slice with room for extra more messages (the turn's own).
func assembleContext(v historyView, budget int64, extra int) []provider.Message {
	var msgs []provider.Message
	if len(v.msgs) == len(v.tail) && v.msgs != nil {
		msgs = make([]provider.Message, 0, len(v.msgs)+extra)
		for i := range v.msgs {
			if v.msgs[i].Role != "" {
				msgs = append(msgs, v.msgs[i])
			}
		}
	} else {
		msgs = providerHistory(v.tail, extra)
	}
	return fitContext(msgs, budget-summaryTokens(v.summary))
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
