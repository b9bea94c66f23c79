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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// at is a record at seq of role with text; call and result make a tool call and its result.
func at(seq int64, role, text string) transcript.Record {
	return transcript.Record{Seq: seq, Message: transcript.Message{Role: role,
		Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}}
}

// callAt2 and resultAt3 are a tool call and its answer, the pair that must
// stay together in a window.
func callAt2() transcript.Record {
	return transcript.Record{Seq: 2, Message: transcript.Message{Role: transcript.RoleAssistant,
		Content: []transcript.ContentBlock{{Type: transcript.BlockToolCall, ID: "c", Name: "sessions_list", Arguments: []byte(`{}`)}}}}
}

func resultAt3() transcript.Record {
	r := at(3, transcript.RoleToolResult, "[]")
	r.Message.ToolCallID, r.Message.ToolName = "c", "sessions_list"
	return r
}

// summaryRec is a compaction record made at seq that folds records 1 to to.
func summaryRec(seq, to int64, text string) transcript.Record {
	r := at(seq, transcript.RoleCompaction, text)
	r.Message.Compaction = &transcript.Compaction{FromSeq: 1, ToSeq: to}
	return r
}

func seqs(recs []transcript.Record) []int64 {
	out := []int64{}
	for _, r := range recs {
		out = append(out, r.Seq)
	}
	return out
}

func TestViewHistory(t *testing.T) {
	own := summaryRec(9, 4, "own")
	type view struct {
		Summary  int64 // seq of the summary, 0 for none
		Tail     []int64
		Complete bool
	}
	cases := map[string]struct {
		history []transcript.Record
		first   int64
		own     *transcript.Record
		want    view
	}{
		"empty": {want: view{Tail: []int64{}, Complete: true}},
		"no summary, from the start": {history: []transcript.Record{at(1, "user", "a"), at(2, "assistant", "b")}, first: 1,
			want: view{Tail: []int64{1, 2}, Complete: true}},
		"no summary, older records unread": {history: []transcript.Record{at(5, "user", "a")}, first: 5,
			want: view{Tail: []int64{5}}},
		"the latest summary and what follows its range": {
			history: []transcript.Record{at(3, "user", "a"), summaryRec(4, 2, "s1"), at(5, "user", "b"),
				at(6, "assistant", "c"), summaryRec(7, 5, "s2"), at(8, "user", "d")},
			first: 3, want: view{Summary: 7, Tail: []int64{6, 7, 8}, Complete: true}},
		"kept records before the window": {history: []transcript.Record{at(5, "user", "a"), summaryRec(6, 2, "s")}, first: 5,
			want: view{Summary: 6, Tail: []int64{5, 6}}},
		"the turn's own summary wins": {history: []transcript.Record{at(3, "user", "a"), at(5, "assistant", "b")}, first: 3, own: &own,
			want: view{Summary: 9, Tail: []int64{5}, Complete: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := viewHistory(tc.history, tc.first, tc.own)
			got := view{Tail: seqs(v.tail), Complete: v.complete}
			if v.summary != nil {
				got.Summary = v.summary.Seq
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
		})
	}
}

func TestShouldCompact(t *testing.T) {
	on := compactionConfig{enabled: true, triggerRatio: 0.8}
	cases := map[string]struct {
		cfg      compactionConfig
		tokens   int64
		complete bool
		want     bool
	}{
		"under the trigger":             {cfg: on, tokens: 800, complete: true},
		"over the trigger":              {cfg: on, tokens: 801, complete: true, want: true},
		"history beyond what was read":  {cfg: on, tokens: 10, want: true},
		"disabled":                      {cfg: compactionConfig{triggerRatio: 0.8}, tokens: 5000},
		"a lower ratio triggers sooner": {cfg: compactionConfig{enabled: true, triggerRatio: 0.5}, tokens: 501, complete: true, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := shouldCompact(tc.cfg, 1000, tc.tokens, tc.complete); got != tc.want {
				t.Errorf("shouldCompact = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSplitFold(t *testing.T) {
	cases := map[string]struct {
		tail []transcript.Record
		keep int
		want int
	}{
		"keep none":          {tail: []transcript.Record{at(1, "user", "a"), at(2, "assistant", "b")}, keep: 0, want: 2},
		"keep more than all": {tail: []transcript.Record{at(1, "user", "a")}, keep: 5, want: 0},
		"keep the newest two": {tail: []transcript.Record{at(1, "user", "a"), at(2, "assistant", "b"), at(3, "user", "c"),
			at(4, "assistant", "d")}, keep: 2, want: 2},
		"a tool result stays with its call": {tail: []transcript.Record{at(1, "user", "a"), callAt2(), resultAt3(),
			at(4, "assistant", "d")}, keep: 2, want: 1},
		"system records are not counted": {tail: []transcript.Record{at(1, "user", "a"), at(2, "system", "ctx"),
			at(3, "user", "c")}, keep: 1, want: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := splitFold(tc.tail, tc.keep); got != tc.want {
				t.Errorf("splitFold = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestAssembleContext(t *testing.T) {
	long := strings.Repeat("x", 400) // 100 tokens
	s := summaryRec(10, 4, "older talk")
	cases := map[string]struct {
		view   historyView
		budget int64
		want   []string // role:text of each message
	}{
		"summary and the messages after its range": {
			view:   historyView{summary: &s, tail: []transcript.Record{at(5, "user", "hi"), at(6, "assistant", "yo")}},
			budget: 1000, want: []string{"user:hi", "assistant:yo"}},
		"the summary's tokens come off the budget": {
			view:   historyView{summary: &s, tail: []transcript.Record{at(5, "user", long), at(6, "assistant", long)}},
			budget: 100 + estimateTokens(len(summaryText(&s))), want: []string{"assistant:" + long}},
		"a tool result is never sent without its call": {
			view:   historyView{tail: []transcript.Record{at(1, "user", long), callAt2(), resultAt3(), at(4, "assistant", "ok")}},
			budget: 4, want: []string{"assistant:ok"}},
		"a call is kept with its result": {
			view:   historyView{tail: []transcript.Record{at(1, "user", long), callAt2(), resultAt3(), at(4, "assistant", "ok")}},
			budget: 20, want: []string{"assistant:", "tool:[]", "assistant:ok"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, m := range assembleContext(tc.view, tc.budget, 0) {
				got = append(got, string(m.Role)+":"+m.Text)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompactionInput(t *testing.T) {
	fold := []transcript.Record{at(1, "user", "first question"), callAt2(), resultAt3(), at(4, "system", "ctx"), at(5, "assistant", "answer")}
	got := compactionInput("we met", fold, 1<<20)
	want := "Compaction step. Fold the previous summary and the messages below into one summary of the conversation so far.\n" +
		"Previous summary:\nwe met\nMessages:\n[1] user: first question\n[2] assistant:  [call sessions_list {}]\n" +
		"[3] tool sessions_list: []\n[5] assistant: answer\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	// Over the budget, the newest messages are kept.
	short := compactionInput("", fold, len("[5] assistant: answer")+1)
	if !strings.HasPrefix(short, CompactionStepPrefix) || strings.Contains(short, "first question") || !strings.Contains(short, "[5] assistant: answer") {
		t.Errorf("budgeted input = %q", short)
	}
	if strings.Contains(short, "Previous summary") {
		t.Errorf("an input without a previous summary names one: %q", short)
	}
}
