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
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The work every turn does before its model call allocates only what the turn itself needs:
// these guards keep the per-turn costs that once added up to 148 KB a turn from coming back
// (make bench-check measures the whole turn).

// A session whose Agent adds no tools gets the built-in ones as assembled once.
func TestToolsForAPlainTurnAreAssembledOnce(t *testing.T) {
	ts := sessionTools()
	agent := scriptedAgent("main")
	for name, key := range map[string]string{"session": keyA, "sub-agent": keySub} {
		s := session(key, "main", "sid")
		defs, offered := ts.forTurn(context.Background(), agent, s)
		// A sub-agent gets none of the built-in (session) tools.
		if len(defs) != len(offered) || (len(defs) == 0) != (name == "sub-agent") {
			t.Fatalf("%s: %d tools offered, %d by name", name, len(defs), len(offered))
		}
		if allocs := testing.AllocsPerRun(50, func() { ts.forTurn(context.Background(), agent, s) }); allocs > 1 {
			// One at most: telling a sub-agent's key from its grammar.
			t.Errorf("%s: forTurn allocates %.0f times, want the tools assembled once", name, allocs)
		}
	}
}

// With tracing off (no exporter configured), a turn's spans cost nothing.
func TestSpansAllocateNothingWhileTracingIsOff(t *testing.T) {
	req := &TurnRequest{ID: "uid/round-1", Namespace: ns, TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	call := &provider.ToolCall{ID: "c1", Name: "sessions_list"}
	allocs := testing.AllocsPerRun(50, func() {
		ctx, span := startTurnSpan(context.Background(), req)
		endTurnSpan(span, &turn{req: req})
		_, span = startToolSpan(ctx, call)
		endToolSpan(span, false, "")
	})
	if allocs != 0 {
		t.Errorf("a turn span and a tool span allocate %.0f times with tracing off, want 0", allocs)
	}
}

// modelBytes counts what toProvider's message counts, for every kind of record.
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
		pm, shown := toProvider(&m)
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
			t.Errorf("%s (-toProvider +modelBytes):\n%s", name, d)
		}
	}
}
