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
	"cmp"
	"fmt"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// DestinationOf is where a session's announces go: its spec.deliveryContext, else its own
// channel and spec.lastTo. A deliveryContext without a channel takes the session's.
func DestinationOf(s *sessionsv1alpha1.AgentSession) sessionsv1alpha1.DeliveryContext {
	own := TargetOf(s).Channel
	dc := sessionsv1alpha1.DeliveryContext{Channel: own, To: s.Spec.LastTo}
	if c := s.Spec.DeliveryContext; c != nil {
		dc = *c
		if dc.Channel == "" {
			dc.Channel = own
		}
	}
	return dc
}

// ThreadDestination is the delivery context of a thread-bound sub-agent session: its
// requester's destination, in thread, so the child's announces (after later sends into it,
// and of the runs it spawns) land there. The chat is named in to: the child's key names
// none, where the requester's may be all that names it (agent:main:telegram:group:42).
// requester is nil when the run has none.
func ThreadDestination(requester *sessionsv1alpha1.AgentSession, thread string) sessionsv1alpha1.DeliveryContext {
	var dc sessionsv1alpha1.DeliveryContext
	if requester != nil {
		dc = DestinationOf(requester)
		dc.To = cmp.Or(dc.To, ChatIDOf(requester, dc))
	}
	dc.ThreadID = thread
	return dc
}

// DecideDelivery is the send policy applied to an announce of session s that goes to dc
// (DestinationOf, maybe with a thread of its own). The session is judged as every turn is;
// then, when dc is another channel or chat type than the session's, the chat the message
// actually reaches is judged too: its channel, and its chat type as dc.To names it
// (group:7); else the session's on the session's channel, and on another channel every chat
// type, since nothing says which one it is. The session's spec.sendPolicy speaks for its own
// channel and chat type only, so it does not carry an announce elsewhere.
func DecideDelivery(p *sessionsv1alpha1.SendPolicySpec, s *sessionsv1alpha1.AgentSession, dc sessionsv1alpha1.DeliveryContext) SendDecision {
	own := TargetOf(s)
	d := DecideSend(p, own)
	if !d.Allowed {
		return d
	}
	dest := SendTarget{Key: own.Key, Channel: normChannel(dc.Channel)}
	if dest.Channel == "" {
		dest.Channel = own.Channel
	}
	chatTypes := []string{string(sessionsv1alpha1.ChatTypeDirect), string(sessionsv1alpha1.ChatTypeGroup), string(sessionsv1alpha1.ChatTypeRoom)}
	switch ct := sessionkey.ChatTypeOfTo(dc.To); {
	case ct != "":
		chatTypes = []string{chatTypeOf(ct)}
	case dest.Channel == own.Channel:
		chatTypes = []string{own.ChatType}
	}
	if dest.Channel == own.Channel && chatTypes[0] == own.ChatType {
		return d
	}
	for _, ct := range chatTypes {
		dest.ChatType = ct
		if d = DecideSend(p, dest); !d.Allowed {
			return deliveryDenial(p, s, dc, dest, own, d)
		}
	}
	return d
}

// deliveryDenial names where the announce goes, the rule that denies it, and what to change.
func deliveryDenial(p *sessionsv1alpha1.SendPolicySpec, s *sessionsv1alpha1.AgentSession, dc sessionsv1alpha1.DeliveryContext, dest, own SendTarget, d SendDecision) SendDecision {
	field := "spec.lastTo"
	if s.Spec.DeliveryContext != nil {
		field = "spec.deliveryContext"
	}
	chat := dest.ChatType + " chat"
	if sessionkey.ChatTypeOfTo(dc.To) == "" && dest.Channel != own.Channel {
		chat = "chat of unnamed type (judged as a " + dest.ChatType + "; name it: direct:<peer>, group:<id>)"
	}
	where := fmt.Sprintf("the announce goes to %s %s on %s (%s), not to the session's own %s chat on %s",
		chat, orNone(dc.To), dest.Channel, field, orNone(own.ChatType), own.Channel)
	if d.By == DecidedByRule {
		d.Reason = fmt.Sprintf("%s: denied by sessionPolicy default rule %d (%s -> deny); point %s at an allowed chat or change the rule",
			where, d.Rule, describeMatch(p.Rules[d.Rule-1].Match), field)
	} else {
		d.Reason = fmt.Sprintf("%s: denied by sessionPolicy default (no rule matched, sendPolicy.default=deny); point %s at an allowed chat or add an allow rule",
			where, field)
	}
	return d
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
