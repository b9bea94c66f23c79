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
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func TestTerms(t *testing.T) {
	cases := map[string]struct {
		in   string
		want []string
		expr string
	}{
		"one word":              {in: "llamas", want: []string{"llamas"}, expr: `"llamas"`},
		"case and punctuation":  {in: "Llamas, ALPACAS!", want: []string{"llamas", "alpacas"}, expr: `"llamas" "alpacas"`},
		"operators are words":   {in: `a OR b NOT "c" NEAR(d)`, want: []string{"a", "or", "b", "not", "c", "near", "d"}, expr: `"a" "or" "b" "not" "c" "near" "d"`},
		"fts syntax is dropped": {in: `col:x* ^y -z`, want: []string{"col", "x", "y", "z"}, expr: `"col" "x" "y" "z"`},
		"repeats once":          {in: "pong Pong PONG", want: []string{"pong"}, expr: `"pong"`},
		"unicode":               {in: "Zürich café 東京", want: []string{"zürich", "café", "東京"}, expr: `"zürich" "café" "東京"`},
		"nothing to search":     {in: ` "*" :: `, want: nil, expr: ``},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Terms(tc.in)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Terms(%q) (-want +got):\n%s", tc.in, d)
			}
			if e := MatchExpr(got); e != tc.expr {
				t.Errorf("MatchExpr = %q, want %q", e, tc.expr)
			}
		})
	}
	if n := len(Terms(strings.Repeat("w", 1) + strings.Repeat(" x1 x2 x3 x4 x5 x6 x7 x8 x9 y1 y2 y3 y4 y5 y6 y7 y8 y9", 1))); n != MaxTerms {
		t.Errorf("Terms kept %d words, want at most %d", n, MaxTerms)
	}
}

func TestNormalize(t *testing.T) {
	cases := map[string]struct {
		in      transcript.SearchQuery
		want    transcript.SearchQuery
		wantErr string
	}{
		"defaults":        {in: transcript.SearchQuery{Namespace: "team", Text: "x"}, want: transcript.SearchQuery{Namespace: "team", Text: "x", Limit: DefaultLimit}},
		"limit clamped":   {in: transcript.SearchQuery{Namespace: "team", Text: "x", Limit: 5000, Offset: -3}, want: transcript.SearchQuery{Namespace: "team", Text: "x", Limit: MaxLimit}},
		"offset bounded":  {in: transcript.SearchQuery{Namespace: "team", Text: "x", Limit: 3, Offset: 1 << 30}, want: transcript.SearchQuery{Namespace: "team", Text: "x", Limit: 3, Offset: MaxOffset}},
		"empty query":     {in: transcript.SearchQuery{Namespace: "team", Text: " ? "}, wantErr: ErrEmptyQuery.Error()},
		"bad namespace":   {in: transcript.SearchQuery{Namespace: "../etc", Text: "x"}, wantErr: "not a valid namespace"},
		"query too large": {in: transcript.SearchQuery{Namespace: "team", Text: strings.Repeat("a ", MaxQueryBytes)}, wantErr: "longer than"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Normalize(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 30)
	cases := map[string]struct {
		text, terms  string
		want         string
		wantRedacted bool
	}{
		"short text whole":   {text: "llamas are  tall\n animals", terms: "llamas", want: "llamas are tall animals"},
		"cut around the hit": {text: long + "the llama spits " + long, terms: "llama", want: "…lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum the llama spits lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem…"},
		"case folded":        {text: "The LLAMA", terms: "llama", want: "The LLAMA"},
		"key masked":         {text: "use sk-abcdefghijklmnopqrstuvwx to call llama", terms: "llama", want: "use [REDACTED] to call llama", wantRedacted: true},
		"key at the edge masked": {text: long + "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789 then llama", terms: "llama",
			want: "…lorem ipsum lorem ipsum lorem ipsum lorem ipsum Authorization: [REDACTED] then llama", wantRedacted: true},
		"no hit: the start": {text: "nothing here", terms: "llama", want: "nothing here"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, red := Excerpt(tc.text, Terms(tc.terms))
			if got != tc.want || red != tc.wantRedacted {
				t.Errorf("Excerpt = %q, %v\nwant      %q, %v", got, red, tc.want, tc.wantRedacted)
			}
			if len(got) > ExcerptBytes+len("…") {
				t.Errorf("excerpt of %d bytes", len(got))
			}
		})
	}
}

func TestText(t *testing.T) {
	text := func(role string, blocks ...transcript.ContentBlock) *transcript.Message {
		return &transcript.Message{Role: role, Content: blocks}
	}
	tb := func(s string) transcript.ContentBlock {
		return transcript.ContentBlock{Type: transcript.BlockText, Text: s}
	}
	cases := map[string]struct {
		m    *transcript.Message
		want string
	}{
		"user":        {m: text(transcript.RoleUser, tb("a"), tb("b")), want: "a\nb"},
		"assistant":   {m: text(transcript.RoleAssistant, tb("x"), transcript.ContentBlock{Type: transcript.BlockToolCall, Name: "t"}), want: "x"},
		"tool result": {m: text(transcript.RoleToolResult, tb("out")), want: "out"},
		"system":      {m: text(transcript.RoleSystem, tb("you are")), want: ""},
		"thinking":    {m: text(transcript.RoleAssistant, transcript.ContentBlock{Type: transcript.BlockThinking, Thinking: "hmm"}), want: ""},
		"bounded":     {m: text(transcript.RoleUser, tb(strings.Repeat("é", maxBodyBytes))), want: strings.Repeat("é", maxBodyBytes/2)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Text(tc.m); got != tc.want {
				t.Errorf("Text = %.40q (%d bytes), want %.40q (%d bytes)", got, len(got), tc.want, len(tc.want))
			}
		})
	}
}

// FuzzQuery: whatever a caller types, the match expression is only quoted words (FTS5 reads
// no operator, column or syntax error from it) and the excerpt stays within its bound and
// valid UTF-8.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"llamas", `a OR "b" NEAR(c) col:x* ^y`, "Zürich 東京", "\x00\xff", strings.Repeat("w ", 40)} {
		f.Add(s, "some text with llamas and sk-abcdefghijklmnopqrstuvwx")
	}
	f.Fuzz(func(t *testing.T, q, text string) {
		terms := Terms(q)
		if len(terms) > MaxTerms {
			t.Fatalf("%d terms", len(terms))
		}
		for _, w := range terms {
			if w == "" || strings.ContainsAny(w, `"*:^()`) {
				t.Fatalf("term %q", w)
			}
		}
		if e := MatchExpr(terms); strings.Count(e, `"`) != 2*len(terms) {
			t.Fatalf("expression %q", e)
		}
		ex, _ := Excerpt(text, terms)
		if len(ex) > ExcerptBytes+len("…") {
			t.Fatalf("excerpt of %d bytes", len(ex))
		}
		if utf8.ValidString(text) && !utf8.ValidString(ex) {
			t.Fatalf("excerpt %q of valid text is not UTF-8", ex)
		}
	})
}
