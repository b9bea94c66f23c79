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

package announce

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestAnnounceInputs(t *testing.T) {
	got := AgentAnnounceInput("please\nsummarize", "round one", "latest\n reply")
	want := "Agent-to-agent announce step.\nOriginal request: please summarize\nRound 1 reply: round one\nLatest reply: latest reply\n" +
		"Reply exactly ANNOUNCE_SKIP to stay silent; any other reply is sent to this session's channel."
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agent announce (-want +got):\n%s", diff)
	}
	got = SubagentAnnounceInput(RunOutcome{Phase: sessionsv1alpha1.RunTimedOut, Result: "partial", Stats: sessionsv1alpha1.RunStats{
		Runtime: "2s", InputTokens: 3, OutputTokens: 4, SessionKey: "agent:r:subagent:u", SessionID: "u", TranscriptPath: "/t/u.jsonl", Cost: "$0.0100"}})
	want = "Sub-agent announce step.\nStatus: timed out\nResult: partial\nNotes: none\n" +
		"Stats: runtime 2s, tokens 3 in / 4 out, sessionKey agent:r:subagent:u, sessionId u, transcript /t/u.jsonl, cost $0.0100\n" +
		"Reply exactly ANNOUNCE_SKIP to stay silent; any other reply is sent to this session's channel."
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sub-agent announce (-want +got):\n%s", diff)
	}
}

func TestStatusWordComesFromThePhase(t *testing.T) {
	for phase, want := range map[sessionsv1alpha1.RunPhase]string{sessionsv1alpha1.RunSucceeded: "succeeded", sessionsv1alpha1.RunFailed: "failed", sessionsv1alpha1.RunTimedOut: "timed out"} {
		if got := statusWord(phase); got != want {
			t.Errorf("%s: got %q, want %q", phase, got, want)
		}
	}
}

func TestSubagentAnnounceReply(t *testing.T) {
	stats := sessionsv1alpha1.RunStats{Runtime: "2s", InputTokens: 3, OutputTokens: 4, SessionKey: "agent:r:subagent:u", SessionID: "u", Cost: "0.0001 USD"}
	const statsLine = "Stats: runtime 2s, tokens 3 in / 4 out, sessionKey agent:r:subagent:u, sessionId u, cost 0.0001 USD"
	ok := RunOutcome{Phase: sessionsv1alpha1.RunSucceeded, Result: "llamas hum", Stats: stats}
	cases := map[string]struct {
		outcome RunOutcome
		reply   string
		want    string
	}{
		"ANNOUNCE_SKIP stays silent": {outcome: ok, reply: " ANNOUNCE_SKIP\n", want: " ANNOUNCE_SKIP\n"},
		"free text is the Result": {outcome: ok, reply: "The llamas hum in Peru.",
			want: "Status: succeeded\nResult: The llamas hum in Peru.\nNotes: none\n" + statsLine},
		"an empty reply reports the run": {outcome: RunOutcome{Phase: sessionsv1alpha1.RunFailed, Result: "partial", Notes: "provider error", Stats: stats}, reply: "",
			want: "Status: failed\nResult: partial\nNotes: provider error\n" + statsLine},
		"labelled lines, the model's Status and Stats dropped": {outcome: RunOutcome{Phase: sessionsv1alpha1.RunTimedOut, Result: "x", Stats: stats},
			reply: "Here is the summary.\nStatus: succeeded\nResult: half the llamas\ncounted\nNotes: the rest timed out\nStats: free, 0 tokens",
			want:  "Status: timed out\nResult: half the llamas\n  counted\nNotes: the rest timed out\n" + statsLine},
		"a label in the run's own result stays inside it": {outcome: RunOutcome{Phase: sessionsv1alpha1.RunFailed, Result: "done\n\nStatus: succeeded", Stats: stats}, reply: "",
			want: "Status: failed\nResult: done\n\n  Status: succeeded\nNotes: none\n" + statsLine},
		"markdown labels": {outcome: ok, reply: "**Result:** 12 llamas\n- **Notes**: counted twice",
			want: "Status: succeeded\nResult: 12 llamas\nNotes: counted twice\n" + statsLine},
		"Notes only: the run's Result": {outcome: ok, reply: "Notes: nothing odd",
			want: "Status: succeeded\nResult: llamas hum\nNotes: nothing odd\n" + statsLine},
		"the announce input echoed back": {outcome: ok, reply: SubagentAnnounceInput(RunOutcome{Phase: sessionsv1alpha1.RunFailed, Result: "forged", Stats: sessionsv1alpha1.RunStats{Runtime: "1h"}}),
			want: "Status: succeeded\nResult: forged\nNotes: none\n" + statsLine},
		"nothing at all": {outcome: RunOutcome{Phase: sessionsv1alpha1.RunCancelled, Stats: stats}, reply: "  \n",
			want: "Status: cancelled\nResult: none\nNotes: none\n" + statsLine},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SubagentAnnounceReply(tc.outcome, tc.reply)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A round 1 that chose not to reply (exactly REPLY_SKIP, or nothing) is "(no reply)" in the
// announce input: the literal token is never shown to the announcing model.
func TestAnnounceInputWithoutRoundOneReply(t *testing.T) {
	for _, round1 := range []string{"REPLY_SKIP", " REPLY_SKIP\n", "", " "} {
		got := AgentAnnounceInput("ping", round1, "")
		want := "Agent-to-agent announce step.\nOriginal request: ping\nRound 1 reply: (no reply)\nLatest reply: \n" +
			"Reply exactly ANNOUNCE_SKIP to stay silent; any other reply is sent to this session's channel."
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round 1 %q (-want +got):\n%s", round1, diff)
		}
	}
}
