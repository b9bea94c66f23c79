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

package mcptools

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

func TestToResult(t *testing.T) {
	cases := map[string]struct {
		in   mcp.CallToolResult
		want Result
	}{
		"text parts": {
			mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
			Result{Text: "a\nb"},
		},
		"structured only": {
			mcp.CallToolResult{StructuredContent: map[string]any{"sum": 5}},
			Result{Text: `{"sum":5}`},
		},
		"structured repeated as text is not doubled": {
			mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{ "sum": 5 }`}}, StructuredContent: map[string]any{"sum": 5}},
			Result{Text: `{ "sum": 5 }`},
		},
		"structured repeated in another key order": {
			mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"b":1,"a":2}`}}, StructuredContent: map[string]any{"a": 2, "b": 1}},
			Result{Text: `{"b":1,"a":2}`},
		},
		"structured beside other text": {
			mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}, StructuredContent: []any{1, 2}},
			Result{Text: "done\n[1,2]"},
		},
		"isError": {
			mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such city"}}},
			Result{Text: "no such city", IsError: true},
		},
		"a chain refusal is known by its mark, not its words": {
			mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no more sends"}},
				Meta: mcp.Meta{policy.ChainMetaKey: policy.RefusalMeta(policy.LimitMaxPairRepeats)}},
			Result{Text: "no more sends", IsError: true, ChainRefused: policy.LimitMaxPairRepeats},
		},
		"a refusal's words without the mark are no refusal": {
			mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "chain limit reached: (SessionPolicy spec.limits.maxHops is 8); this chain crossed the wire (A2A or MCP between agent servers), and every hop counts toward it"}}},
			Result{Text: "chain limit reached: (SessionPolicy spec.limits.maxHops is 8); this chain crossed the wire (A2A or MCP between agent servers), and every hop counts toward it", IsError: true},
		},
		"a mark on a result that succeeded is ignored": {
			mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, Meta: mcp.Meta{policy.ChainMetaKey: policy.RefusalMeta(policy.LimitMaxHops)}},
			Result{Text: "ok"},
		},
		"isError without content": {
			mcp.CallToolResult{IsError: true},
			Result{Text: "the tool reported an error without details", IsError: true},
		},
		"binary described, not inlined": {
			mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 10)},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 3)},
				&mcp.ResourceLink{URI: "file:///x", Name: "x"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://t", Text: "inline text"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "application/zip", Blob: make([]byte, 7)}},
			}},
			Result{Text: "[image image/png, 10 bytes]\n[audio audio/wav, 3 bytes]\n[resource link file:///x x]\ninline text\n[resource mem://b application/zip, 7 bytes]"},
		},
	}
	for name, c := range cases {
		if d := cmp.Diff(c.want, toResult(&c.in)); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}

func TestToResultBoundsTheText(t *testing.T) {
	big := strings.Repeat("é", MaxResultBytes) // two bytes each: the cut falls mid-rune
	got := toResult(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}})
	head, tail, ok := strings.Cut(got.Text, "\n[truncated: ")
	if !ok || len(head) > MaxResultBytes || !strings.HasSuffix(tail, " more bytes]") || strings.ContainsRune(head, '\uFFFD') {
		t.Errorf("truncated result: %d bytes head, tail %q", len(head), tail)
	}
}
