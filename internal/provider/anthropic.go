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

package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/sse"
)

const (
	defaultAnthropicBaseURL = "https://api.anthropic.com"
	anthropicVersion        = "2023-06-01"
	// defaultAnthropicMaxTokens fills max_tokens, which the Messages API requires.
	defaultAnthropicMaxTokens = 4096
)

// anthropic speaks the Messages API. A thinking level enables extended thinking with a
// budget (thinkingBudget); the signed thinking blocks of a reply travel back with its
// message (Message.Reasoning), as the API requires within a tool loop.
type anthropic struct{ endpoint }

func newAnthropic(cfg Config) *anthropic {
	h := http.Header{}
	h.Set("Anthropic-Version", anthropicVersion)
	if cfg.APIKey != "" {
		h.Set("X-Api-Key", cfg.APIKey)
	}
	return &anthropic{newEndpoint(cfg, defaultAnthropicBaseURL, "/v1/messages", h)}
}

func (p *anthropic) Name() string { return Anthropic }

type antRequest struct {
	Model     string       `json:"model"`
	MaxTokens int          `json:"max_tokens"`
	System    []antBlock   `json:"system,omitempty"`
	Messages  []antMessage `json:"messages"`
	Tools     []antTool    `json:"tools,omitempty"`
	Stream    bool         `json:"stream,omitempty"`
	Thinking  *antThinking `json:"thinking,omitempty"`
}

// antThinking enables extended thinking; budget_tokens counts within max_tokens.
type antThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// thinkingBudget is the extended-thinking budget of a level, in tokens; 0 (off, unset)
// sends no thinking block. The API's least budget is 1024; xhigh stays within the 32k
// output tokens of the smallest current models once the reply's tokens are added.
func thinkingBudget(level string) int {
	switch level {
	case "minimal":
		return 1024
	case "low":
		return 2048
	case "medium":
		return 8192
	case "high":
		return 16384
	case "xhigh":
		return 24576
	}
	return 0
}

type antMessage struct {
	Role    string     `json:"role"`
	Content []antBlock `json:"content"`
}

// antBlock is every content block shape we send or read; omitempty keeps
// each block to its own fields.
type antBlock struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	// thinking, redacted_thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
	// CacheControl marks the end of a prefix the API caches (cachePoint).
	CacheControl *antCache `json:"cache_control,omitempty"`
}

// antCache is a prompt-cache breakpoint: the request's prefix up to and including the
// block is cached for a few minutes and read back at the cached-input price.
type antCache struct {
	Type string `json:"type"`
}

// cachePoint marks the stable prefixes of a session's requests: the tools, the system
// prompt and the compaction summary, the first message (three of the API's four
// breakpoints), so a long session's summary is billed as cached input.
var cachePoint = &antCache{Type: "ephemeral"}

// systemBlocks is the system prompt, which ends a cached prefix.
func systemBlocks(req *Request) []antBlock {
	if req.System == "" {
		return nil
	}
	return []antBlock{{Type: "text", Text: req.System, CacheControl: cachePoint}}
}

// reasoningBlocks are the thinking blocks to send back with an assistant message.
func reasoningBlocks(rs []Reasoning) []antBlock {
	var out []antBlock
	for _, r := range rs {
		if r.Redacted != "" {
			out = append(out, antBlock{Type: "redacted_thinking", Data: r.Redacted})
			continue
		}
		out = append(out, antBlock{Type: "thinking", Thinking: r.Text, Signature: r.Signature})
	}
	return out
}

// reasoningOf is the Reasoning of a thinking or redacted_thinking block.
func reasoningOf(b *antBlock) (Reasoning, bool) {
	switch b.Type {
	case "thinking":
		return Reasoning{Text: b.Thinking, Signature: b.Signature}, true
	case "redacted_thinking":
		return Reasoning{Redacted: b.Data}, true
	}
	return Reasoning{}, false
}

type antTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	// CacheControl is set on the last tool: the tools are the first cached prefix.
	CacheControl *antCache `json:"cache_control,omitempty"`
}

type antUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// inputTokens counts cached prompt tokens too: they are still input.
func (u antUsage) inputTokens() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

type antResponse struct {
	Type       string     `json:"type"`
	Model      string     `json:"model"`
	Content    []antBlock `json:"content"`
	StopReason string     `json:"stop_reason"`
	Usage      antUsage   `json:"usage"`
}

func (p *anthropic) Complete(ctx context.Context, req Request) (*Response, error) {
	return p.complete(ctx, req, p.wireRequest(req), p.decode, p.decodeStreamText)
}

func (p *anthropic) wireRequest(req Request) antRequest {
	w := antRequest{Model: p.model(req), MaxTokens: req.MaxTokens, System: systemBlocks(&req), Stream: p.cfg.Stream}
	if w.MaxTokens <= 0 {
		w.MaxTokens = defaultAnthropicMaxTokens
	}
	budget := thinkingBudget(req.Thinking)
	if budget > 0 {
		// max_tokens must exceed the budget: the reply keeps its own allowance on top.
		w.Thinking = &antThinking{Type: "enabled", BudgetTokens: budget}
		w.MaxTokens += budget
	}
	w.Messages = make([]antMessage, 0, len(req.Messages)+1)
	if m, ok := req.SummaryMessage(); ok {
		w.Messages = append(w.Messages, antMessage{Role: "user", Content: []antBlock{{Type: "text", Text: m.Text, CacheControl: cachePoint}}})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		role := "user" // tool results travel in user messages
		var blocks []antBlock
		switch m.Role {
		case RoleAssistant:
			role = "assistant"
			if budget > 0 {
				blocks = append(blocks, reasoningBlocks(m.Reasoning)...)
			}
			if m.Text != "" {
				blocks = append(blocks, antBlock{Type: "text", Text: m.Text})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, antBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: toolInput(tc.Arguments)})
			}
		case RoleTool:
			blocks = append(blocks, antBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Text, IsError: m.IsError})
		default:
			// The API rejects empty text blocks.
			if m.Text != "" {
				blocks = append(blocks, antBlock{Type: "text", Text: m.Text})
			}
		}
		if len(blocks) == 0 {
			continue
		}
		// Consecutive same-role messages become one: several tool results,
		// or tool results followed by the user's next words, form one user turn.
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == role {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, blocks...)
			continue
		}
		w.Messages = append(w.Messages, antMessage{Role: role, Content: blocks})
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		w.Tools = append(w.Tools, antTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if n := len(w.Tools); n > 0 {
		w.Tools[n-1].CacheControl = cachePoint
	}
	return w
}

// toolInput is a tool_use input, which the API requires to be an object.
func toolInput(args json.RawMessage) json.RawMessage {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || args[0] != '{' || !json.Valid(args) {
		return json.RawMessage("{}")
	}
	return args
}

// stopReason maps Anthropic's stop reasons onto the OpenAI words the turn
// engine knows.
func stopReason(r string) string {
	switch r {
	case "end_turn", "stop_sequence":
		return StopReasonStop
	case "tool_use":
		return StopReasonToolCalls
	case "max_tokens":
		return StopReasonLength
	}
	return r
}

func (p *anthropic) decode(body io.Reader) (*Response, error) {
	var r antResponse
	if err := readJSON(body, &r); err != nil {
		return nil, err
	}
	if r.Type != "message" {
		return nil, malformed("response type is %q, not message", r.Type)
	}
	out := &Response{Model: r.Model, StopReason: stopReason(r.StopReason),
		Usage: Usage{InputTokens: r.Usage.inputTokens(), OutputTokens: r.Usage.OutputTokens, CachedInputTokens: r.Usage.CacheReadInputTokens}}
	var text strings.Builder
	for i := range r.Content {
		b := &r.Content[i]
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			out.ToolCalls = append(out.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: argsOrEmpty(b.Input)})
		}
		if rb, ok := reasoningOf(b); ok {
			out.Reasoning = append(out.Reasoning, rb)
		}
	}
	out.Text = text.String()
	return out, nil
}

type antStreamEvent struct {
	Type         string          `json:"type"`
	Index        int             `json:"index"`
	Message      *antResponse    `json:"message"`
	ContentBlock *antBlock       `json:"content_block"`
	Delta        json.RawMessage `json:"delta"`
	Usage        *antUsage       `json:"usage"`
	Error        json.RawMessage `json:"error"`
}

type antDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
}

// antStreamErrorType maps the error type of a stream error event onto ours.
func antStreamErrorType(t string) (typ string, retryable bool) {
	switch t {
	case "overloaded_error", "api_error":
		return ErrServer, true
	case "rate_limit_error":
		return ErrRateLimited, true
	case "authentication_error", "permission_error":
		return ErrAuth, false
	}
	return ErrBadRequest, false
}

// decodeStream decodes a stream without a live view.
func (p *anthropic) decodeStream(body io.Reader) (*Response, error) {
	return p.decodeStreamText(body, nil)
}

func (p *anthropic) decodeStreamText(body io.Reader, onText func(string)) (*Response, error) {
	st := antStream{out: &Response{}, onText: onText, reasoningAt: map[int]int{}}
	events := sse.NewReader(body)
	for {
		ev, err := nextEvent(events)
		if errors.Is(err, io.EOF) {
			return nil, errStreamCut
		}
		if err != nil {
			return nil, err
		}
		var e antStreamEvent
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return nil, malformed("stream event is not valid JSON: %v", err)
		}
		if done, err := st.apply(&e); done || err != nil {
			if err != nil {
				return nil, err
			}
			return st.out, nil
		}
	}
}

// antStream is a Messages stream being decoded, one event at a time.
type antStream struct {
	out    *Response
	onText func(string)
	text   strings.Builder
	calls  callBuilders
	usage  antUsage
	// thinking blocks by their index, in the order they started
	reasoning   []Reasoning
	reasoningAt map[int]int
}

// apply folds one event into the stream; done is true once the message stopped.
func (st *antStream) apply(e *antStreamEvent) (done bool, err error) {
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			st.out.Model = e.Message.Model
			st.usage = e.Message.Usage
		}
	case "content_block_start":
		return false, st.blockStart(e)
	case "content_block_delta":
		return false, st.blockDelta(e)
	case "message_delta":
		return false, st.messageDelta(e)
	case "message_stop":
		st.out.Text = st.text.String()
		st.out.ToolCalls = st.calls.toolCalls()
		st.out.Reasoning = st.reasoning
		st.out.Usage = Usage{InputTokens: st.usage.inputTokens(), OutputTokens: st.usage.OutputTokens, CachedInputTokens: st.usage.CacheReadInputTokens}
		return true, nil
	case "error":
		return false, antStreamError(e.Error)
	}
	return false, nil
}

func (st *antStream) blockStart(e *antStreamEvent) error {
	b := e.ContentBlock
	if b == nil {
		return nil
	}
	switch b.Type {
	case "text":
		st.text.WriteString(b.Text)
	case "tool_use":
		if err := st.calls.add(e.Index, b.ID, b.Name, ""); err != nil {
			return err
		}
	}
	if rb, ok := reasoningOf(b); ok {
		st.reasoningAt[e.Index] = len(st.reasoning)
		st.reasoning = append(st.reasoning, rb)
	}
	return nil
}

func (st *antStream) blockDelta(e *antStreamEvent) error {
	var d antDelta
	if err := json.Unmarshal(e.Delta, &d); err != nil {
		return malformed("content_block_delta: %v", err)
	}
	switch d.Type {
	case "text_delta":
		st.text.WriteString(d.Text)
		emit(st.onText, d.Text)
	case "input_json_delta":
		return st.calls.add(e.Index, "", "", d.PartialJSON)
	case "thinking_delta", "signature_delta":
		i, ok := st.reasoningAt[e.Index]
		if !ok {
			return malformed("%s for block %d, which is no thinking block", d.Type, e.Index)
		}
		st.reasoning[i].Text += d.Thinking
		st.reasoning[i].Signature += d.Signature
	}
	return nil
}

func (st *antStream) messageDelta(e *antStreamEvent) error {
	var d antDelta
	if len(e.Delta) > 0 {
		if err := json.Unmarshal(e.Delta, &d); err != nil {
			return malformed("message_delta: %v", err)
		}
	}
	if d.StopReason != "" {
		st.out.StopReason = stopReason(d.StopReason)
	}
	// message_delta usage is cumulative; input counts appear
	// here only on some API versions.
	if u := e.Usage; u != nil {
		st.usage.OutputTokens = u.OutputTokens
		if u.inputTokens() > 0 {
			st.usage.InputTokens, st.usage.CacheCreationInputTokens, st.usage.CacheReadInputTokens =
				u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens
		}
	}
	return nil
}

// antStreamError is the provider error an "error" event of the stream carries.
func antStreamError(raw json.RawMessage) error {
	var ae struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &ae)
	perr := &Error{Message: firstIdentifier(ae.Type)}
	perr.Type, perr.Retryable = antStreamErrorType(ae.Type)
	if perr.Message == "" {
		perr.Message = "error event in stream"
	}
	return perr
}
