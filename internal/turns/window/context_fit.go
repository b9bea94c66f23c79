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
