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

package memory

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func TestPieces(t *testing.T) {
	text := func(role, s string) transcript.Message {
		return transcript.Message{Role: role, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: s}}}
	}
	note, _ := json.Marshal(Note{Text: "keep this", Tags: []string{"a", "b"}})
	long := strings.Repeat("word ", 300) // 1500 bytes: two chunks
	for name, tc := range map[string]struct {
		m           transcript.Message
		toolResults bool
		want        []Piece
	}{
		"a user's words": {m: text(transcript.RoleUser, "hello there"), want: []Piece{{Kind: "message", Text: "hello there"}}},
		"a compaction's summary": {m: text(transcript.RoleCompaction, "we agreed"),
			want: []Piece{{Kind: "summary", Text: "we agreed"}}},
		"a tool result, not kept": {m: text(transcript.RoleToolResult, "output")},
		"a tool result, kept": {m: text(transcript.RoleToolResult, "output"), toolResults: true,
			want: []Piece{{Kind: "tool", Text: "output"}}},
		"system context": {m: text(transcript.RoleSystem, "you are")},
		"blank":          {m: text(transcript.RoleUser, "  \n ")},
		"a note and text": {m: transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.ContentBlock{
			{Type: transcript.BlockText, Text: "noting"}, {Type: transcript.BlockToolCall, Name: WriteTool, Arguments: note},
			{Type: transcript.BlockToolCall, Name: "sessions_list", Arguments: note}}},
			want: []Piece{{Kind: "note", Text: "keep this\n[tags: a, b]"}, {Kind: "message", Part: 1, Text: "noting"}}},
		"a user's memory_write is no note": {m: transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{
			{Type: transcript.BlockToolCall, Name: WriteTool, Arguments: note}}}},
		"cut at white space": {m: text(transcript.RoleUser, long), want: []Piece{
			{Kind: "message", Text: strings.TrimSpace(long[:1020])}, {Kind: "message", Part: 1, Text: strings.TrimSpace(long[1020:])}}},
	} {
		t.Run(name, func(t *testing.T) {
			got := Pieces(&transcript.Record{Message: tc.m}, tc.toolResults)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPiecesBounds(t *testing.T) {
	m := transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText,
		Text: strings.Repeat("é", 40000)}}} // no white space: cut on rune boundaries
	got := Pieces(&transcript.Record{Message: m}, false)
	if len(got) != MaxPartsPerRecord {
		t.Fatalf("%d pieces, want %d", len(got), MaxPartsPerRecord)
	}
	for _, p := range got {
		if len(p.Text) > MaxChunkBytes || !strings.HasPrefix(p.Text, "é") || !strings.HasSuffix(p.Text, "é") {
			t.Errorf("a piece of %d bytes, or cut inside a rune", len(p.Text))
		}
	}
}

func TestFuse(t *testing.T) {
	got := fuse([]candidate{
		{sid: "meaning first", vecRank: 1, sim: 0.9},
		{sid: "both second", vecRank: 2, wordRank: 2, sim: 0.8},
		{sid: "words first", wordRank: 1},
	})
	var order []string
	for _, c := range got {
		order = append(order, c.sid)
	}
	if diff := cmp.Diff([]string{"both second", "meaning first", "words first"}, order); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
