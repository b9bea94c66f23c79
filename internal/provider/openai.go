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

const defaultOpenAIBaseURL = "https://api.openai.com/v1"

// openAI speaks the Chat Completions wire format, using only fields that
// vLLM, Ollama and LiteLLM accept too.
type openAI struct{ endpoint }

func newOpenAI(cfg Config) *openAI {
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return &openAI{newEndpoint(cfg, defaultOpenAIBaseURL, "/chat/completions", h)}
}

func (p *openAI) Name() string { return OpenAI }

type oaiRequest struct {
	Model           string        `json:"model"`
	Messages        []oaiMessage  `json:"messages"`
	Tools           []oaiTool     `json:"tools,omitempty"`
	MaxTokens       int           `json:"max_tokens,omitempty"`
	ReasoningEffort string        `json:"reasoning_effort,omitempty"`
	Stream          bool          `json:"stream,omitempty"`
	StreamOptions   *oaiStreamOpt `json:"stream_options,omitempty"`
}

type oaiStreamOpt struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaiMessage struct {
	Role string `json:"role"`
	// Content is a pointer so an assistant turn made only of tool calls
	// sends null, as the API documents.
	Content    *string       `json:"content"`
	ToolCalls  []oaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

type oaiTool struct {
	Type     string      `json:"type"`
	Function oaiFunction `json:"function"`
}

type oaiFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type oaiToolCall struct {
	Index    *int   `json:"index,omitempty"` // stream deltas only
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name string `json:"name,omitempty"`
		// Arguments is a JSON document encoded as a string.
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaiUsage struct {
	PromptTokens        int64   `json:"prompt_tokens"`
	CompletionTokens    int64   `json:"completion_tokens"`
	Cost                float64 `json:"cost"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *oaiUsage) usage() Usage {
	return Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, Cost: u.Cost,
		CachedInputTokens: u.PromptTokensDetails.CachedTokens}
}

type oaiResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   *string       `json:"content"`
			ToolCalls []oaiToolCall `json:"tool_calls"`
		} `json:"message"`
		Delta struct {
			Content   *string       `json:"content"`
			ToolCalls []oaiToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaiUsage       `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (p *openAI) Complete(ctx context.Context, req Request) (*Response, error) {
	return p.complete(ctx, req, p.wireRequest(req), p.decode, p.decodeStreamText)
}

func (p *openAI) wireRequest(req Request) oaiRequest {
	w := oaiRequest{Model: p.model(req), MaxTokens: req.MaxTokens, ReasoningEffort: reasoningEffort(req.Thinking)}
	if p.cfg.Stream {
		w.Stream, w.StreamOptions = true, &oaiStreamOpt{IncludeUsage: true}
	}
	w.Messages = make([]oaiMessage, 0, len(req.Messages)+2)
	if req.System != "" {
		w.Messages = append(w.Messages, oaiMessage{Role: "system", Content: &req.System})
	}
	if m, ok := req.SummaryMessage(); ok {
		w.Messages = append(w.Messages, oaiMessage{Role: string(m.Role), Content: &m.Text})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		om := oaiMessage{Role: string(m.Role), Content: &m.Text}
		switch m.Role {
		case RoleAssistant:
			if m.Text == "" && len(m.ToolCalls) > 0 {
				om.Content = nil
			}
			for _, tc := range m.ToolCalls {
				var otc oaiToolCall
				otc.ID, otc.Type = tc.ID, "function"
				otc.Function.Name, otc.Function.Arguments = tc.Name, string(argsOrEmpty(tc.Arguments))
				om.ToolCalls = append(om.ToolCalls, otc)
			}
		case RoleTool:
			om.ToolCallID = m.ToolCallID
		}
		w.Messages = append(w.Messages, om)
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, oaiTool{Type: "function", Function: oaiFunction(t)})
	}
	return w
}

// reasoningEffort maps a thinking level onto reasoning_effort, whose values have the
// levels' names; "off" (and no level) sends nothing, so servers without reasoning still
// accept the request. Admission refuses any other level.
func reasoningEffort(level string) string {
	switch level {
	case "minimal", "low", "medium", "high", "xhigh":
		return level
	}
	return ""
}

func argsOrEmpty(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}")
	}
	return args
}

// toolArgs turns the arguments string a model produced into JSON. Models
// do emit broken JSON now and then; it is kept as a JSON string so the tool
// runner can report the problem to the model instead of the turn failing.
func toolArgs(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	quoted, _ := json.Marshal(s)
	return quoted
}

func (p *openAI) decode(body io.Reader) (*Response, error) {
	var r oaiResponse
	if err := readJSON(body, &r); err != nil {
		return nil, err
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return nil, streamError(errorReason(r.Error, "error in response"))
	}
	if len(r.Choices) == 0 {
		return nil, malformed("response has no choices")
	}
	c := r.Choices[0]
	out := &Response{Model: r.Model}
	if c.Message.Content != nil {
		out.Text = *c.Message.Content
	}
	for _, tc := range c.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: toolArgs(tc.Function.Arguments)})
	}
	if c.FinishReason != nil {
		out.StopReason = *c.FinishReason
	}
	if r.Usage != nil {
		out.Usage = r.Usage.usage()
	}
	return out, nil
}

// streamError is an error event inside a 200 stream. The server has given
// up mid-answer, which is most often overload, so it is worth a retry.
func streamError(msg string) *Error {
	return &Error{Type: ErrServer, Message: msg, Retryable: true}
}

// errStreamCut is a stream that ended before the server said it was done.
var errStreamCut = errors.New("event stream ended before the response was complete")

// decodeStream decodes a stream without a live view.
func (p *openAI) decodeStream(body io.Reader) (*Response, error) {
	return p.decodeStreamText(body, nil)
}

func (p *openAI) decodeStreamText(body io.Reader, onText func(string)) (*Response, error) {
	out := &Response{}
	var text strings.Builder
	var calls callBuilders
	done, finished := false, false
	events := sse.NewReader(body)
	for !done {
		ev, err := nextEvent(events)
		if errors.Is(err, io.EOF) {
			// Tolerate servers that close without [DONE] once the answer is whole.
			if !finished {
				return nil, errStreamCut
			}
			break
		}
		if err != nil {
			return nil, err
		}
		if string(bytes.TrimSpace(ev.Data)) == "[DONE]" {
			done = true
			continue
		}
		var chunk oaiResponse
		if err := json.Unmarshal(ev.Data, &chunk); err != nil {
			return nil, malformed("stream chunk is not valid JSON: %v", err)
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			return nil, streamError(errorReason(chunk.Error, "error event in stream"))
		}
		if chunk.Model != "" {
			out.Model = chunk.Model
		}
		if chunk.Usage != nil {
			out.Usage = chunk.Usage.usage()
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		c := chunk.Choices[0]
		if c.Delta.Content != nil {
			text.WriteString(*c.Delta.Content)
			emit(onText, *c.Delta.Content)
		}
		for _, d := range c.Delta.ToolCalls {
			i := len(calls)
			switch {
			case d.Index != nil:
				i = *d.Index
			case d.ID == "" && i > 0:
				i-- // no index and no id: more of the last call
			}
			if err := calls.add(i, d.ID, d.Function.Name, d.Function.Arguments); err != nil {
				return nil, err
			}
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			out.StopReason, finished = *c.FinishReason, true
		}
	}
	out.Text = text.String()
	out.ToolCalls = calls.toolCalls()
	return out, nil
}
