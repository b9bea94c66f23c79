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

package search

import (
	"strings"
	"unicode/utf8"

	"github.com/agent-sessions/agent-session-operator/internal/redact"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// An excerpt shows ExcerptBytes of a message at most, starting excerptLead bytes before the
// first word found.
const (
	ExcerptBytes = 240
	excerptLead  = 80
)

// Excerpt is the part of text around the first of terms it holds, with credential-like text
// masked first (so a key cut by the excerpt's edge is still masked), and whether any was.
// Text cut off at either end is marked with textutil.Marker.
func Excerpt(text string, terms []string) (string, bool) {
	text, redacted := redact.Redact(text)
	text = strings.Join(strings.Fields(text), " ")
	at := firstIndex(text, terms)
	start := 0
	if at > excerptLead {
		start = at - excerptLead
		// Start on a word: move forward to the next space within the lead.
		if sp := strings.IndexByte(text[start:at], ' '); sp >= 0 {
			start += sp + 1
		}
		for start < at && !utf8.RuneStart(text[start]) {
			start++
		}
	}
	out := textutil.Truncate(text[start:], ExcerptBytes)
	if start > 0 {
		out = textutil.Marker + out
	}
	return out, redacted
}

// firstIndex is the byte offset in text of the earliest of terms, case-folded; 0 when none
// is found (or case folding changed the text's length, where offsets would not carry over).
func firstIndex(text string, terms []string) int {
	lower := strings.ToLower(text)
	if len(lower) != len(text) {
		return 0
	}
	best := -1
	for _, t := range terms {
		if i := strings.Index(lower, t); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return max(best, 0)
}
