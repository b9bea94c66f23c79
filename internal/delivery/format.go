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

package delivery

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Format is how a chat platform shows an announce: the length of one message, how a
// model's text is escaped so that it cannot mention anyone or inject markup, and how the
// announce's labels are made bold. Pure: table- and fuzz-tested in format_test.go.
type Format struct {
	// Limit is the longest message the platform takes, in UTF-16 code units (what Telegram
	// counts; never less than the code points Discord, Slack and WhatsApp count).
	Limit int
	// Escape maps one character of the text to what is sent for it ("" drops it) when
	// changed; a character it does not change is sent as written.
	Escape func(r rune) (to string, changed bool)
	// Bold wraps a label ("Status:"); nil leaves labels plain.
	Bold func(label string) string
}

// The platforms' limits, from their API references.
const (
	TelegramLimit = 4096
	DiscordLimit  = 2000
	WhatsAppLimit = 4096
	SlackLimit    = 40000
)

// partPrefixReserve is room for "(32/32) ".
const partPrefixReserve = 8

// truncatedNote ends the last part of an announce cut at MaxParts.
const truncatedNote = " … (truncated)"

// MaxParts bounds the messages of one announce (status records each of them).
const MaxParts = 32

// labels are the lines of a normalised announce that Bold marks.
var labels = []string{"Status:", "Result:", "Notes:", "Stats:"}

// The formats of the chat kinds.
var (
	// TelegramFormat is plain text (no parse_mode): nothing a model writes is markup.
	TelegramFormat = Format{Limit: TelegramLimit, Escape: plainRune}
	// WhatsAppFormat is plain text too.
	WhatsAppFormat = Format{Limit: WhatsAppLimit, Escape: plainRune}
	// SlackFormat is mrkdwn: &, < and > are the control characters of links and mentions
	// (<!channel>, <@U1>) and are always escaped.
	SlackFormat = Format{Limit: SlackLimit, Escape: slackRune, Bold: func(l string) string { return "*" + l + "*" }}
	// DiscordFormat is Discord markdown: markup characters are escaped with a backslash and
	// every @ and < gets a zero-width space after it, so @everyone, @here, <@id> and <#id>
	// are text (the POST also sets allowed_mentions to none).
	DiscordFormat = Format{Limit: DiscordLimit, Escape: discordRune, Bold: func(l string) string { return "**" + l + "**" }}
)

const zwsp = "\u200b"

// plainRune keeps the text as it is, minus control characters (but newlines and tabs) and
// the bidirectional overrides that can make a message read as something else.
func plainRune(r rune) (string, bool) {
	switch {
	case r == '\n' || r == '\t':
		return "", false
	case r == utf8.RuneError, unicode.IsControl(r), isBidiControl(r):
		return "", true
	}
	return "", false
}

func isBidiControl(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f'
}

func slackRune(r rune) (string, bool) {
	switch r {
	case '&':
		return "&amp;", true
	case '<':
		return "&lt;", true
	case '>':
		return "&gt;", true
	}
	return plainRune(r)
}

func discordRune(r rune) (string, bool) {
	switch r {
	case '\\', '*', '_', '~', '`', '|', '>', '[', ']', '#':
		return `\` + string(r), true
	case '@', '<':
		return string(r) + zwsp, true
	}
	return plainRune(r)
}

// units is what a string costs against a Limit.
func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// Render is text as the platform's messages: escaped, labels bold, split at the limit
// (between lines, else between words, else anywhere) into at most MaxParts numbered parts
// ("(1/3) "), in order. An empty text is no message.
func (f Format) Render(text string) []string {
	chunks := f.split(strings.TrimSpace(text), f.Limit-partPrefixReserve)
	out := make([]string, 0, len(chunks))
	for i, c := range chunks {
		if len(chunks) > 1 {
			c = fmt.Sprintf("(%d/%d) %s", i+1, len(chunks), c)
		}
		out = append(out, c)
	}
	return out
}

// split escapes text, labels bold, into chunks of at most budget units each. The labels'
// markup counts against the budget: a text of nothing but labels fits as any other.
func (f Format) split(text string, budget int) []string {
	var (
		chunks []string
		cur    strings.Builder
		used   int
		// lastLine and lastSpace are where cur could end: the byte offset after a newline
		// or a space, and the units used up to there.
		lastLine, lastSpace         = -1, -1
		lastLineUsed, lastSpaceUsed int
	)
	flush := func(at int) {
		s := cur.String()
		chunk, rest := strings.TrimSpace(s[:at]), strings.TrimLeft(s[at:], " \n\t")
		if chunk != "" {
			chunks = append(chunks, chunk)
		}
		cur.Reset()
		cur.WriteString(rest)
		used = units(rest)
		lastLine, lastSpace = -1, -1
	}
	truncated := false
	lineStart := true
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		e, changed := f.Escape(r)
		if !changed {
			// Kept as written: a slice of text, not a string made for each character.
			e = text[i : i+size]
		}
		if label := f.labelAt(text[i:], lineStart); label != "" {
			e, size = f.Bold(label), len(label)
		}
		i += size
		if e == "" {
			continue
		}
		lineStart = r == '\n'
		n := units(e)
		if used+n > budget {
			switch {
			case lastLine > 0 && lastLineUsed*2 >= budget:
				flush(lastLine)
			case lastSpace > 0 && lastSpaceUsed*2 >= budget:
				flush(lastSpace)
			default:
				flush(cur.Len())
			}
			if len(chunks) == MaxParts {
				truncated = true
				break
			}
		}
		cur.WriteString(e)
		used += n
		switch r {
		case '\n':
			lastLine, lastLineUsed = cur.Len(), used
		case ' ':
			lastSpace, lastSpaceUsed = cur.Len(), used
		}
	}
	if !truncated {
		if rest := strings.TrimSpace(cur.String()); rest != "" {
			chunks = append(chunks, rest)
		}
		return chunks
	}
	// Cut at MaxParts: the last part says so.
	last := chunks[MaxParts-1]
	for units(last)+units(truncatedNote) > budget {
		_, size := utf8.DecodeLastRuneInString(last)
		last = last[:len(last)-size]
	}
	chunks[MaxParts-1] = last + truncatedNote
	return chunks
}

// labelAt is the label that s, at the start of a line, starts with, when f bolds labels;
// "" otherwise. A label is one unit of the split: its markup is never cut.
func (f Format) labelAt(s string, lineStart bool) string {
	if !lineStart || f.Bold == nil {
		return ""
	}
	for _, label := range labels {
		if strings.HasPrefix(s, label) {
			return label
		}
	}
	return ""
}
