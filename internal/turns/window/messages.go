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
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

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
