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
	"unicode/utf8"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Bounds of what is remembered.
const (
	// MaxChunkBytes is a chunk's text at most: a message is cut at white space into chunks
	// of this size.
	MaxChunkBytes = 1024
	// MaxPartsPerRecord bounds the chunks of one record: a pasted log is remembered by its
	// start.
	MaxPartsPerRecord = 16
	// MaxChunksPerSession bounds a session's chunks: past it its oldest chunks that are not
	// notes are forgotten.
	MaxChunksPerSession = 5000
	// MaxNoteTags bounds a note's tags.
	MaxNoteTags = 16
)

// WriteTool is the tool whose calls are notes.
const WriteTool = "memory_write"

// Piece is one chunk of a record: its kind, its place among the record's chunks, its text.
type Piece struct {
	Kind string
	Part int
	Text string
}

// Note is memory_write's arguments.
type Note struct {
	Text string   `json:"text"`
	Tags []string `json:"tags,omitempty"`
}

// NoteText is what is indexed of a note: its text, then its tags.
func NoteText(n Note) string {
	t := strings.TrimSpace(n.Text)
	if len(n.Tags) > 0 {
		t += "\n[tags: " + strings.Join(n.Tags[:min(len(n.Tags), MaxNoteTags)], ", ") + "]"
	}
	return t
}

// Pieces are the chunks memory keeps of a record: the words of users and the assistant,
// the notes of its memory_write calls, a compaction's summary, and a tool's result when
// toolResults is set. System context, commands and thinking are not remembered.
func Pieces(rec *transcript.Record, toolResults bool) []Piece {
	m := &rec.Message
	var kind string
	switch m.Role {
	case transcript.RoleUser, transcript.RoleAssistant:
		kind = transcript.ChunkMessage
	case transcript.RoleCompaction:
		kind = transcript.ChunkSummary
	case transcript.RoleToolResult:
		if !toolResults {
			return nil
		}
		kind = transcript.ChunkTool
	default:
		return nil
	}
	var out []Piece
	add := func(kind, text string) {
		for _, t := range split(text, MaxChunkBytes) {
			if len(out) == MaxPartsPerRecord {
				return
			}
			out = append(out, Piece{Kind: kind, Part: len(out), Text: t})
		}
	}
	var text strings.Builder
	for _, c := range m.Content {
		switch {
		case c.Type == transcript.BlockText && c.Text != "":
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(c.Text)
		case c.Type == transcript.BlockToolCall && c.Name == WriteTool && m.Role == transcript.RoleAssistant:
			var n Note
			if json.Unmarshal(c.Arguments, &n) == nil && strings.TrimSpace(n.Text) != "" {
				add(transcript.ChunkNote, NoteText(n))
			}
		}
	}
	add(kind, text.String())
	return out
}

// split cuts text into pieces of at most limit bytes, at white space where it can, on a
// rune boundary always; blank text is no piece.
func split(text string, limit int) []string {
	var out []string
	for {
		text = strings.TrimSpace(text)
		if text == "" {
			return out
		}
		if len(text) <= limit {
			return append(out, text)
		}
		cut := strings.LastIndexAny(text[:limit], " \n\t")
		if cut <= limit/2 {
			cut = limit
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
}
