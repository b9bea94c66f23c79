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

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The model's view of a turn's history: transcript messages as the provider reads them
// (ToProvider), the latest summary and the records after its range (historyView), and what
// of them fits the Agent's context window (fit). Compaction (compaction.go) decides and
// folds; here the history is seen and fitted, for the turn and for compaction alike.

// messageText joins a transcript message's text blocks.
func messageText(m *transcript.Message) string { return transcript.MessageText(m) }

// messageTextLen is len(messageText(m)), without joining the blocks.
func messageTextLen(m *transcript.Message) int {
	n := 0
	for i := range m.Content {
		if m.Content[i].Type == transcript.BlockText {
			n += len(m.Content[i].Text)
		}
	}
	return n
}

// ToProvider converts a transcript message to the model's view; system messages and
// unknown roles are not sent (the system prompt comes from the Agent). The message's text is
// set either way.
func ToProvider(m *transcript.Message) (provider.Message, bool) {
	out := provider.Message{Text: messageText(m)}
	switch m.Role {
	case transcript.RoleUser:
		out.Role = provider.RoleUser
	case transcript.RoleAssistant:
		out.Role = provider.RoleAssistant
		for _, c := range m.Content {
			switch c.Type {
			case transcript.BlockToolCall:
				out.ToolCalls = append(out.ToolCalls, provider.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			case transcript.BlockThinking:
				out.Reasoning = append(out.Reasoning, reasoningOf(c))
			}
		}
	case transcript.RoleToolResult:
		out.Role = provider.RoleTool
		out.ToolCallID, out.ToolName, out.IsError = m.ToolCallID, m.ToolName, m.IsError
	default:
		return out, false
	}
	return out, true
}

// modelBytes is messageBytes of m's model view (ToProvider) without building it, and false
// for messages the model never sees: every turn counts its whole history.
func modelBytes(m *transcript.Message) (int, bool) {
	switch m.Role {
	case transcript.RoleUser, transcript.RoleToolResult:
		return messageTextLen(m), true
	case transcript.RoleAssistant:
		n := messageTextLen(m)
		for i := range m.Content {
			if c := &m.Content[i]; c.Type == transcript.BlockToolCall {
				n += len(c.Name) + len(c.Arguments)
			}
		}
		return n, true
	}
	return 0, false
}

// reasoningOf is the provider form of a thinking block.
func reasoningOf(c transcript.ContentBlock) provider.Reasoning {
	if c.Redacted {
		return provider.Reasoning{Redacted: c.ThinkingSignature}
	}
	return provider.Reasoning{Text: c.Thinking, Signature: c.ThinkingSignature}
}

const (
	// DefaultContextTokens is the context window assumed when the Agent gives none.
	DefaultContextTokens = 128000
	// historyMessages is how many recent messages a turn reads before fitting them.
	historyMessages = transcript.DefaultLimit
	// replyReserve is the share of the context window kept free for the reply (1/8).
	replyReserveDiv = 8
)

// estimateTokens counts a token per 4 bytes, the estimate the scripted provider uses too.
func estimateTokens(bytes int) int64 { return int64(bytes+3) / 4 }

func messageBytes(m *provider.Message) int {
	n := len(m.Text)
	for _, tc := range m.ToolCalls {
		n += len(tc.Name) + len(tc.Arguments)
	}
	return n
}

// fitContext keeps the newest history messages that fit in budget tokens and drops tool
// results left without their call at the front, which providers reject.
func fitContext(history []provider.Message, budget int64) []provider.Message {
	start := len(history)
	for start > 0 {
		t := estimateTokens(messageBytes(&history[start-1]))
		if t > budget {
			break
		}
		budget -= t
		start--
	}
	for start < len(history) && history[start].Role == provider.RoleTool {
		start++
	}
	return history[start:]
}

// contextBudget is what the history may use of the agent's context window.
func contextBudget(window int64, system string, tools []provider.Tool, input *provider.Message) int64 {
	used := estimateTokens(len(system)) + estimateTokens(messageBytes(input))
	for i := range tools {
		used += estimateTokens(len(tools[i].Name) + len(tools[i].Description) + len(tools[i].Parameters))
	}
	return window - window/replyReserveDiv - used
}

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
