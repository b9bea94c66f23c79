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

// Package protocol holds the fixed system contexts that tell a model what a turn the
// operator started is: round 1 of an agent-to-agent send, each reply-back turn, the announce
// steps and a sub-agent's task. A real model is never told REPLY_SKIP or ANNOUNCE_SKIP
// otherwise, and would run every ping-pong turn and take the other agent's words for its
// user's. Each text is one short paragraph appended to the agent's system prompt for that
// turn only, and recorded in the transcript as the turn's system context.
package protocol

import (
	"fmt"
	"strings"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// The seeds' exact control replies.
const (
	ReplySkip    = sessionsv1alpha1.ReplySkip
	AnnounceSkip = sessionsv1alpha1.AnnounceSkip
)

// RoundOne is the target's context for the primary run of a send from session from.
func RoundOne(from string) string {
	return fmt.Sprintf("Agent-to-agent message: the next user message was sent by session %s with sessions_send, "+
		"not typed by this session's user. Your reply is returned to that session.", from)
}

// ReplyBack is the context of reply-back turn turn (1-based) of at most maxTurns, run in one
// side of the exchange; other is the session whose latest reply is the turn's input.
func ReplyBack(other string, turn, maxTurns int) string {
	left := max(maxTurns-turn, 0)
	return fmt.Sprintf("Agent-to-agent reply-back, turn %d of at most %d: the next user message is the latest reply of "+
		"session %s, not typed by this session's user, and your reply goes back to it (%d more %s after this one). "+
		"If nothing more needs saying, reply exactly %s to end the exchange.",
		turn, maxTurns, other, left, plural(left, "turn", "turns"), ReplySkip)
}

// AgentAnnounce is the target's context for the announce step of a send from session from
// (a person's send has no announce step).
func AgentAnnounce(from string) string {
	return fmt.Sprintf("Agent-to-agent announce step: the exchange with session %s is over. Your reply is delivered to "+
		"this session's channel; reply exactly %s to stay silent.", from, AnnounceSkip)
}

// SubagentAnnounce is the requester's context for the announce step of a sub-agent run it
// spawned; child is the run's child session.
func SubagentAnnounce(child string) string {
	return fmt.Sprintf("Sub-agent announce step: the next user message reports the outcome of the sub-agent run in "+
		"session %s that this session spawned; its Status comes from the runtime, not the sub-agent. This session's "+
		"channel gets that Status, your reply's Result: and Notes: lines (text without a label is the Result; the run's "+
		"own where you give none) and the stats line; reply exactly %s to stay silent.", child, AnnounceSkip)
}

// SubagentTask is a sub-agent's context for its task, spawned by session requester;
// sessionTools are the session tools its Agent's subagents.tools grants it (none by
// default), which it is told by name.
func SubagentTask(requester, label string, sessionTools []string) string {
	task := "a task"
	if label != "" {
		task = fmt.Sprintf("the task %q", label)
	}
	tools := "You have no session tools; use the other tools"
	if len(sessionTools) > 0 {
		tools = fmt.Sprintf("Your session tools are %s (a sub-agent never spawns); use them, the other tools",
			strings.Join(sessionTools, ", "))
	}
	return fmt.Sprintf("You are a sub-agent: session %s spawned you to do %s, the next user message. Your final reply "+
		"is the task's result and is announced back to that session. %s you have and the files of your workspace "+
		"(workspace_list, workspace_read).", requester, task, tools)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// NoReply says a round-1 reply is none: empty, blank, or exactly REPLY_SKIP (the target
// chose not to reply). sessions_send reports it as ok with reply "" and noReply, and the
// announce step's input never shows the literal token.
func NoReply(reply string) bool {
	r := strings.TrimSpace(reply)
	return r == "" || r == ReplySkip
}
