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

package policy

import (
	"fmt"
	"strings"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// SendTarget is what the send policy looks at in a target session.
type SendTarget struct {
	Key string
	// Channel is the effective channel (sessionkey.ChannelOf).
	Channel string
	// ChatType is direct, group or room.
	ChatType string
	// Override is the session's own spec.sendPolicy; "" inherits.
	Override sessionsv1alpha1.Action
}

// Who decided a send.
const (
	DecidedBySession = "session"
	DecidedByRule    = "rule"
	DecidedByDefault = "default"
	DecidedByBuiltin = "builtin"
)

// SendDecision is the send policy's answer and what decided it.
type SendDecision struct {
	Allowed bool
	// By is DecidedBySession, DecidedByRule, DecidedByDefault or DecidedByBuiltin.
	By string
	// Rule is the 1-based index of the deciding rule when By is DecidedByRule.
	Rule int
	// Reason names the deciding rule and, for a denial, the setting that would allow it.
	Reason string
}

// TargetOf builds the send target of a session: its effective channel and chat type. A key
// that names a channel and chat type (agent:<id>:<channel>:group:<id>) decides both, whatever
// the spec says (the relabelling rule); other keys take them from the spec, the chat type
// derived from the key when the spec does not set it.
func TargetOf(s *sessionsv1alpha1.AgentSession) SendTarget {
	k, _ := sessionkey.Parse(s.Spec.Key)
	channel := sessionkey.ChannelOf(k, string(s.Spec.Channel), s.Spec.LastChannel)
	chatType := string(s.Spec.ChatType)
	if chatType == "" {
		chatType = keyChatType(k)
	}
	if k.Channel != "" {
		channel, chatType = k.Channel, keyChatType(k)
	}
	return SendTarget{Key: s.Spec.Key, Channel: channel, ChatType: chatType, Override: s.Spec.SendPolicy}
}

// keyChatType is the chat type a key implies: a group or room for group and channel keys,
// direct for direct and main keys, "" for the rest.
func keyChatType(k sessionkey.Key) string {
	switch {
	case k.ChatType != "":
		return chatTypeOf(k.ChatType)
	case k.Kind == sessionkey.KindMain:
		return string(sessionsv1alpha1.ChatTypeDirect)
	}
	return ""
}

// chatTypeOf maps a chat type of the key grammar (group, channel, direct) to the API's
// (group, room, direct).
func chatTypeOf(grammar string) string {
	if grammar == sessionkey.ChatTypeChannel {
		return string(sessionsv1alpha1.ChatTypeRoom)
	}
	return grammar
}

// DecideSend applies the seeds' send policy: the session's override wins; else the first
// matching deny rule denies; else a matching allow rule allows; else the policy's default;
// else the send is allowed. p may be nil (no SessionPolicy in the namespace).
func DecideSend(p *sessionsv1alpha1.SendPolicySpec, t SendTarget) SendDecision {
	switch t.Override {
	case sessionsv1alpha1.ActionAllow:
		return SendDecision{Allowed: true, By: DecidedBySession, Reason: "allowed by the session's spec.sendPolicy=allow"}
	case sessionsv1alpha1.ActionDeny:
		return SendDecision{By: DecidedBySession,
			Reason: "send denied by the session's spec.sendPolicy=deny; set spec.sendPolicy=allow or unset it to inherit the SessionPolicy (needs the verb set-send-policy on the session: agent-sessions-send-admin)"}
	}
	if p == nil {
		return SendDecision{Allowed: true, By: DecidedByBuiltin, Reason: "allowed: no SessionPolicy in the namespace"}
	}
	allowAt := 0
	for i, r := range p.Rules {
		if !Matches(r.Match, t) {
			continue
		}
		if r.Action == sessionsv1alpha1.ActionDeny {
			return SendDecision{By: DecidedByRule, Rule: i + 1, Reason: fmt.Sprintf(
				"send denied by sessionPolicy default rule %d (%s -> deny); set spec.sendPolicy=allow on the session or change the rule",
				i+1, describeMatch(r.Match))}
		}
		if allowAt == 0 {
			allowAt = i + 1
		}
	}
	if allowAt > 0 {
		return SendDecision{Allowed: true, By: DecidedByRule, Rule: allowAt, Reason: fmt.Sprintf(
			"allowed by sessionPolicy default rule %d (%s -> allow)", allowAt, describeMatch(p.Rules[allowAt-1].Match))}
	}
	if p.Default == sessionsv1alpha1.ActionDeny {
		return SendDecision{By: DecidedByDefault,
			Reason: "send denied by sessionPolicy default (no rule matched, sendPolicy.default=deny); set spec.sendPolicy=allow on the session or add an allow rule"}
	}
	return SendDecision{Allowed: true, By: DecidedByDefault, Reason: "allowed by sessionPolicy default (no rule matched)"}
}

// Matches reports whether every field the match gives holds for the target. Channels compare
// case-insensitively, as keys hold them in lower case.
func Matches(m sessionsv1alpha1.SendRuleMatch, t SendTarget) bool {
	if m.Channel != "" && !strings.EqualFold(string(m.Channel), t.Channel) {
		return false
	}
	if m.ChatType != "" && string(m.ChatType) != t.ChatType {
		return false
	}
	return m.KeyPrefix == "" || strings.HasPrefix(t.Key, m.KeyPrefix)
}

func describeMatch(m sessionsv1alpha1.SendRuleMatch) string {
	var parts []string
	if m.Channel != "" {
		parts = append(parts, "channel="+string(m.Channel))
	}
	if m.ChatType != "" {
		parts = append(parts, "chatType="+string(m.ChatType))
	}
	if m.KeyPrefix != "" {
		parts = append(parts, "keyPrefix="+m.KeyPrefix)
	}
	return strings.Join(parts, ", ")
}
