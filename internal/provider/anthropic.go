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

// anthropic speaks the Messages API. Request.Thinking is not sent: extended
// thinking requires echoing signed thinking blocks back on tool-use turns,
// which Message does not carry.
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
	System    string       `json:"system,omitempty"`
	Messages  []antMessage `json:"messages"`
	Tools     []antTool    `json:"tools,omitempty"`
	Stream    bool         `json:"stream,omitempty"`
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
}

type antTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
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
	return p.complete(ctx, req, p.wireRequest(req), p.decode, p.decodeStream)
}

func (p *anthropic) wireRequest(req Request) antRequest {
	w := antRequest{Model: p.model(req), MaxTokens: req.MaxTokens, System: req.System, Stream: p.cfg.Stream}
	if w.MaxTokens <= 0 {
		w.MaxTokens = defaultAnthropicMaxTokens
	}
	w.Messages = make([]antMessage, 0, len(req.Messages))
	for i := range req.Messages {
		m := &req.Messages[i]
		role := "user" // tool results travel in user messages
		var blocks []antBlock
		switch m.Role {
		case RoleAssistant:
			role = "assistant"
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
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			out.ToolCalls = append(out.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: argsOrEmpty(b.Input)})
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

func (p *anthropic) decodeStream(body io.Reader) (*Response, error) {
	out := &Response{}
	var text strings.Builder
	var calls callBuilders
	var usage antUsage
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
		switch e.Type {
		case "message_start":
			if e.Message != nil {
				out.Model = e.Message.Model
				usage = e.Message.Usage
			}
		case "content_block_start":
			if b := e.ContentBlock; b != nil {
				switch b.Type {
				case "text":
					text.WriteString(b.Text)
				case "tool_use":
					if err := calls.add(e.Index, b.ID, b.Name, ""); err != nil {
						return nil, err
					}
				}
			}
		case "content_block_delta":
			var d antDelta
			if err := json.Unmarshal(e.Delta, &d); err != nil {
				return nil, malformed("content_block_delta: %v", err)
			}
			switch d.Type {
			case "text_delta":
				text.WriteString(d.Text)
			case "input_json_delta":
				if err := calls.add(e.Index, "", "", d.PartialJSON); err != nil {
					return nil, err
				}
			}
		case "message_delta":
			var d antDelta
			if len(e.Delta) > 0 {
				if err := json.Unmarshal(e.Delta, &d); err != nil {
					return nil, malformed("message_delta: %v", err)
				}
			}
			if d.StopReason != "" {
				out.StopReason = stopReason(d.StopReason)
			}
			// message_delta usage is cumulative; input counts appear
			// here only on some API versions.
			if u := e.Usage; u != nil {
				usage.OutputTokens = u.OutputTokens
				if u.inputTokens() > 0 {
					usage.InputTokens, usage.CacheCreationInputTokens, usage.CacheReadInputTokens =
						u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens
				}
			}
		case "message_stop":
			out.Text = text.String()
			out.ToolCalls = calls.toolCalls()
			out.Usage = Usage{InputTokens: usage.inputTokens(), OutputTokens: usage.OutputTokens, CachedInputTokens: usage.CacheReadInputTokens}
			return out, nil
		case "error":
			var ae struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(e.Error, &ae)
			perr := &Error{Message: firstIdentifier(ae.Type)}
			perr.Type, perr.Retryable = antStreamErrorType(ae.Type)
			if perr.Message == "" {
				perr.Message = "error event in stream"
			}
			return nil, perr
		}
	}
}
