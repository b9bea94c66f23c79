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
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// modelBytes counts what ToProvider's message counts, for every kind of record.
func TestModelBytesMatchesTheModelView(t *testing.T) {
	text := func(s string) transcript.ContentBlock {
		return transcript.ContentBlock{Type: transcript.BlockText, Text: s}
	}
	cases := map[string]transcript.Message{
		"user":             {Role: transcript.RoleUser, Content: []transcript.ContentBlock{text("hello")}},
		"user, two blocks": {Role: transcript.RoleUser, Content: []transcript.ContentBlock{text("hel"), text("lo")}},
		"assistant with tool calls and thinking": {Role: transcript.RoleAssistant, Content: []transcript.ContentBlock{
			{Type: transcript.BlockThinking, Thinking: "hmm", ThinkingSignature: "sig"}, text("let me look"),
			{Type: transcript.BlockToolCall, ID: "c1", Name: "sessions_list", Arguments: json.RawMessage(`{"limit":5}`)}}},
		"tool result": {Role: transcript.RoleToolResult, ToolCallID: "c1", ToolName: "sessions_list", Content: []transcript.ContentBlock{text(`{"sessions":[]}`)}},
		"system":      {Role: transcript.RoleSystem, Content: []transcript.ContentBlock{text("context")}},
		"compaction":  {Role: transcript.RoleCompaction, Content: []transcript.ContentBlock{text("summary")}},
	}
	for name, m := range cases {
		pm, shown := ToProvider(&m)
		want := struct {
			Bytes int
			Shown bool
		}{0, shown}
		if shown {
			want.Bytes = messageBytes(&pm)
		}
		got := want
		got.Bytes, got.Shown = modelBytes(&m)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-ToProvider +modelBytes):\n%s", name, d)
		}
	}
}
