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
	"strings"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// messageText joins a transcript message's text blocks.
func messageText(m *transcript.Message) string {
	if len(m.Content) == 1 && m.Content[0].Type == transcript.BlockText {
		return m.Content[0].Text
	}
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == transcript.BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

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

// toProvider converts a transcript message to the model's view; system messages and
// unknown roles are not sent (the system prompt comes from the Agent).
func toProvider(m *transcript.Message) (provider.Message, bool) {
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

// modelBytes is messageBytes of m's model view (toProvider) without building it, and false
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

// thinkingBlock is the transcript form of a block of the model's thinking.
func thinkingBlock(r provider.Reasoning) transcript.ContentBlock {
	if r.Redacted != "" {
		return transcript.ContentBlock{Type: transcript.BlockThinking, ThinkingSignature: r.Redacted, Redacted: true}
	}
	return transcript.ContentBlock{Type: transcript.BlockThinking, Thinking: r.Text, ThinkingSignature: r.Signature}
}

// assistantMessage is the transcript form of a model response made at the thinking level
// thinking, its usage priced with the turn's Agent pricing (nil: unpriced).
func assistantMessage(resp *provider.Response, providerName string, pricing *v1.Pricing, thinking v1.ThinkingLevel) transcript.Message {
	m := transcript.Message{
		Role:          transcript.RoleAssistant,
		Content:       make([]transcript.ContentBlock, 0, 1+len(resp.ToolCalls)+len(resp.Reasoning)),
		Model:         resp.Model,
		Provider:      providerName,
		StopReason:    resp.StopReason,
		ThinkingLevel: string(thinking),
		Usage: &transcript.Usage{
			Input:       resp.Usage.InputTokens,
			Output:      resp.Usage.OutputTokens,
			TotalTokens: resp.Usage.InputTokens + resp.Usage.OutputTokens,
			Cost:        resp.Usage.Cost,
			CachedInput: resp.Usage.CachedInputTokens,
		},
	}
	// The pricing was validated at admission; one that does not parse leaves it unpriced.
	if priced, err := usage.Price(pricing, resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.Usage.CachedInputTokens); err == nil {
		m.Usage.CostNanos, m.Usage.Currency = priced.CostNanos, priced.Currency
	}
	for _, r := range resp.Reasoning {
		m.Content = append(m.Content, thinkingBlock(r))
	}
	if resp.Text != "" || len(resp.ToolCalls) == 0 {
		m.Content = append(m.Content, transcript.ContentBlock{Type: transcript.BlockText, Text: resp.Text})
	}
	for _, tc := range resp.ToolCalls {
		m.Content = append(m.Content, transcript.ContentBlock{Type: transcript.BlockToolCall, ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	return m
}

// toolResultMessage is the transcript form of a tool's result.
func toolResultMessage(call *provider.ToolCall, text string, isError bool) transcript.Message {
	return transcript.Message{
		Role:       transcript.RoleToolResult,
		Content:    []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}},
		ToolCallID: call.ID,
		ToolName:   call.Name,
		IsError:    isError,
	}
}
