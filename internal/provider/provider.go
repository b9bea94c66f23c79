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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/egress"
)

// Names of the providers accepted in Config.Provider.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
	Scripted  = "scripted"
)

// Role is who wrote a message.
type Role string

// Roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Stop reasons, in the OpenAI vocabulary; Anthropic's are mapped onto them
// so the turn engine only knows one set. Unknown reasons pass through.
const (
	StopReasonStop      = "stop"
	StopReasonToolCalls = "tool_calls"
	StopReasonLength    = "length"
)

// ToolCall is one call the model asks the turn engine to make.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Message is one entry of the conversation sent to the model.
type Message struct {
	Role Role
	Text string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID and ToolName identify the call a tool message answers.
	ToolCallID, ToolName string
	// IsError marks a tool result that reports a failure.
	IsError bool
	// Reasoning is the thinking an assistant message came with, sent back as it came
	// (Anthropic requires its signed thinking blocks back within a tool loop).
	Reasoning []Reasoning
}

// Reasoning is one block of a model's thinking: its text and signature, or, when the
// provider redacted it, only its opaque data.
type Reasoning struct {
	Text, Signature string
	// Redacted holds the opaque data of a redacted block.
	Redacted string
}

// Tool is a function the model may call.
type Tool struct {
	Name, Description string
	// Parameters is a JSON schema object.
	Parameters json.RawMessage
}

// Request is one model call.
type Request struct {
	// Model overrides Config.Model when set.
	Model  string
	System string
	// Summary is the latest compaction summary of the session's older history, sent as
	// the first user message: it is model-written text from the conversation, so it gets no
	// more authority than the conversation had (never the system prompt's). It changes only
	// when the session compacts, so providers with prompt caching end a cached prefix there.
	Summary  string
	Messages []Message
	Tools    []Tool
	// MaxTokens caps the reply; 0 leaves it to the provider (anthropic: 4096).
	MaxTokens int
	// Thinking is the session's thinking level (off|minimal|low|medium|high|xhigh); empty
	// leaves the provider's default.
	Thinking string
}

// SummaryMessage is the user message that carries Summary, first in the conversation.
func (r *Request) SummaryMessage() (Message, bool) {
	return Message{Role: RoleUser, Text: r.Summary}, r.Summary != ""
}

// Usage is what a call cost.
type Usage struct {
	InputTokens, OutputTokens int64
	// CachedInputTokens are the input tokens read from the provider's prompt cache
	// (included in InputTokens).
	CachedInputTokens int64
	// Cost in USD when the server reports it (e.g. LiteLLM, OpenRouter), else 0.
	Cost float64
}

// Response is the model's answer to one call.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
	// StopReason is "stop", "tool_calls", "length" or a provider-specific value.
	StopReason string
	Model      string
	// Reasoning is the model's thinking before its answer, when the provider returns it.
	Reasoning []Reasoning
}

// Provider answers model calls. Implementations are safe for concurrent use.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req Request) (*Response, error)
}

// ScriptToolCall is a tool call a scripted rule makes.
type ScriptToolCall struct {
	Name string
	// Arguments is a JSON value; "{{input}}" in its string values is replaced
	// by the turn's input text.
	Arguments json.RawMessage
}

// ScriptRule is one rule of the scripted provider; see the package doc.
type ScriptRule struct {
	Match     string
	Reply     string
	ToolCalls []ScriptToolCall
	Delay     time.Duration
}

// Config selects and configures a provider.
type Config struct {
	// Provider is "openai", "anthropic" or "scripted"; empty means scripted,
	// the offline default.
	Provider string
	Model    string
	// BaseURL defaults to https://api.openai.com/v1 or https://api.anthropic.com.
	BaseURL string
	APIKey  string
	Script  []ScriptRule
	// HTTPClient nil means a client built from Egress: dial and TLS timeouts, the egress
	// policy judged on every dialed address, and no redirects followed.
	HTTPClient *http.Client
	// Egress is the operator's egress policy, used when HTTPClient is nil; nil refuses
	// loopback, link-local and unspecified addresses.
	Egress *egress.Policy
	// MaxRetries is how often a retryable failure is retried; 0 means 4,
	// negative means never.
	MaxRetries int
	// Stream selects the SSE wire format for openai and anthropic.
	Stream bool
	// AttemptTimeout bounds one HTTP attempt, headers and body, so a hung response is cut
	// off and retried; 0 means DefaultAttemptTimeout, negative means no bound.
	AttemptTimeout time.Duration
	// IdleTimeout bounds the silence within an attempt (before the first byte and between
	// two), so a server that accepts and hangs is cut off and retried; 0 means
	// DefaultIdleTimeout, negative means no bound.
	IdleTimeout time.Duration
	// Clock times script delays and retry waits; nil means the real clock.
	Clock clock.WithTicker
}

// New builds the provider cfg names, or says clearly what is wrong with cfg.
func New(cfg Config) (Provider, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	switch cfg.Provider {
	case Scripted, "":
		return newScripted(cfg)
	case OpenAI, Anthropic:
	default:
		return nil, fmt.Errorf("unknown model provider %q: want %s, %s or %s", cfg.Provider, OpenAI, Anthropic, Scripted)
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("%s provider: a model name is required", cfg.Provider)
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s provider: base URL %q is not an http(s) URL", cfg.Provider, cfg.BaseURL)
		}
	}
	if cfg.HTTPClient == nil {
		if cfg.Egress == nil {
			cfg.HTTPClient = defaultHTTPClient
		} else {
			cfg.HTTPClient = cfg.Egress.Client(egress.ClientOptions{})
		}
	}
	if cfg.Provider == OpenAI {
		return newOpenAI(cfg), nil
	}
	return newAnthropic(cfg), nil
}
