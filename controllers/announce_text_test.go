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

package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestAnnounceInputs(t *testing.T) {
	got := AgentAnnounceInput("please\nsummarize", "round one", "latest\n reply")
	want := "Agent-to-agent announce step.\nOriginal request: please summarize\nRound 1 reply: round one\nLatest reply: latest reply\n" +
		"Reply exactly ANNOUNCE_SKIP to stay silent; any other reply is sent to this session's channel."
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agent announce (-want +got):\n%s", diff)
	}
	got = SubagentAnnounceInput(RunOutcome{Phase: v1.RunTimedOut, Result: "partial", Stats: v1.RunStats{
		Runtime: "2s", InputTokens: 3, OutputTokens: 4, SessionKey: "agent:r:subagent:u", SessionID: "u", TranscriptPath: "/t/u.jsonl", Cost: "$0.0100"}})
	want = "Sub-agent announce step.\nStatus: timed out\nResult: partial\nNotes: none\n" +
		"Stats: runtime 2s, tokens 3 in / 4 out, sessionKey agent:r:subagent:u, sessionId u, transcript /t/u.jsonl, cost $0.0100\n" +
		"Reply exactly ANNOUNCE_SKIP to stay silent; any other reply is sent to this session's channel."
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sub-agent announce (-want +got):\n%s", diff)
	}
}

func TestStatusWordComesFromThePhase(t *testing.T) {
	for phase, want := range map[v1.RunPhase]string{v1.RunSucceeded: "succeeded", v1.RunFailed: "failed", v1.RunTimedOut: "timed out"} {
		if got := statusWord(phase); got != want {
			t.Errorf("%s: got %q, want %q", phase, got, want)
		}
	}
}
