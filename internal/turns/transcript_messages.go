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
	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// thinkingBlock is the transcript form of a block of the model's thinking.
func thinkingBlock(r provider.Reasoning) transcript.ContentBlock {
	if r.Redacted != "" {
		return transcript.ContentBlock{Type: transcript.BlockThinking, ThinkingSignature: r.Redacted, Redacted: true}
	}
	return transcript.ContentBlock{Type: transcript.BlockThinking, Thinking: r.Text, ThinkingSignature: r.Signature}
}

// assistantMessage is the transcript form of a model response made at the thinking level
// thinking, its usage priced with the turn's Agent pricing (nil: unpriced).
func assistantMessage(resp *provider.Response, providerName string, pricing *sessionsv1alpha1.Pricing, thinking sessionsv1alpha1.ThinkingLevel) transcript.Message {
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
