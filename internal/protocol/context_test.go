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

package protocol

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTexts(t *testing.T) {
	cases := map[string]struct {
		got  string
		want string
	}{
		"round one": {RoundOne("agent:alice:main"),
			"Agent-to-agent message: the next user message was sent by session agent:alice:main with sessions_send, not typed by this session's user. Your reply is returned to that session."},
		"first reply-back turn": {ReplyBack("agent:bob:main", 1, 5),
			"Agent-to-agent reply-back, turn 1 of at most 5: the next user message is the latest reply of session agent:bob:main, not typed by this session's user, and your reply goes back to it (4 more turns after this one). If nothing more needs saying, reply exactly REPLY_SKIP to end the exchange."},
		"one turn left": {ReplyBack("agent:bob:main", 4, 5),
			"Agent-to-agent reply-back, turn 4 of at most 5: the next user message is the latest reply of session agent:bob:main, not typed by this session's user, and your reply goes back to it (1 more turn after this one). If nothing more needs saying, reply exactly REPLY_SKIP to end the exchange."},
		"last turn": {ReplyBack("agent:alice:main", 5, 5),
			"Agent-to-agent reply-back, turn 5 of at most 5: the next user message is the latest reply of session agent:alice:main, not typed by this session's user, and your reply goes back to it (0 more turns after this one). If nothing more needs saying, reply exactly REPLY_SKIP to end the exchange."},
		"announce from a session": {AgentAnnounce("agent:alice:main"),
			"Agent-to-agent announce step: the exchange with session agent:alice:main is over. Your reply is delivered to this session's channel; reply exactly ANNOUNCE_SKIP to stay silent."},
		"sub-agent announce": {SubagentAnnounce("agent:research:subagent:1"),
			"Sub-agent announce step: the next user message reports the outcome of the sub-agent run in session agent:research:subagent:1 that this session spawned; its Status comes from the runtime, not the sub-agent. This session's channel gets that Status, your reply's Result: and Notes: lines (text without a label is the Result; the run's own where you give none) and the stats line; reply exactly ANNOUNCE_SKIP to stay silent."},
		"sub-agent task with a label": {SubagentTask("agent:main:main", "llamas", nil),
			"You are a sub-agent: session agent:main:main spawned you to do the task \"llamas\", the next user message. Your final reply is the task's result and is announced back to that session. You have no session tools; use the other tools you have and the files of your workspace (workspace_list, workspace_read)."},
		"sub-agent task without a label": {SubagentTask("agent:main:main", "", nil),
			"You are a sub-agent: session agent:main:main spawned you to do a task, the next user message. Your final reply is the task's result and is announced back to that session. You have no session tools; use the other tools you have and the files of your workspace (workspace_list, workspace_read)."},
		"sub-agent task granted session tools": {SubagentTask("agent:main:main", "", []string{"sessions_history", "sessions_send"}),
			"You are a sub-agent: session agent:main:main spawned you to do a task, the next user message. Your final reply is the task's result and is announced back to that session. Your session tools are sessions_history, sessions_send (a sub-agent never spawns); use them, the other tools you have and the files of your workspace (workspace_list, workspace_read)."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Every reply-back context names the exact control reply, whatever the turn: the words a
// model must answer with to stop the exchange.
func TestReplyBackAlwaysTeachesReplySkip(t *testing.T) {
	for maxTurns := 1; maxTurns <= 5; maxTurns++ {
		for turn := 1; turn <= maxTurns; turn++ {
			if got := ReplyBack("s", turn, maxTurns); !strings.Contains(got, "reply exactly "+ReplySkip) {
				t.Errorf("turn %d of %d does not teach %s: %q", turn, maxTurns, ReplySkip, got)
			}
		}
	}
}
