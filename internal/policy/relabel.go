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

// The routing fields of a session's spec: what the send policy and announce delivery decide
// on. The relabelling rule protects them as spec.sendPolicy is protected.
const (
	FieldChannel         = "channel"
	FieldChatType        = "chatType"
	FieldLastChannel     = "lastChannel"
	FieldLastTo          = "lastTo"
	FieldDeliveryContext = "deliveryContext"
)

// Relabel is one routing field that a session write sets or changes.
type Relabel struct {
	// Field is the spec field (FieldChannel ... FieldDeliveryContext).
	Field string
	// Value is the field's new value as written, for the answer.
	Value string
	// Contradicts is set when the value contradicts the key, which decides: refused to
	// everyone. Otherwise the change needs sessionsv1alpha1.VerbSetSendPolicy (the manager aside).
	Contradicts bool
	// Reason names the rule and what would allow the write.
	Reason string
}

// relabelNeedsVerb is the reason of a change that is not a contradiction.
var relabelNeedsVerb = fmt.Sprintf("the send policy and announce delivery decide on it (the relabelling rule), "+
	"so setting or changing it needs the verb %s on the session, as spec.sendPolicy does (the agent-sessions-send-admin ClusterRole)",
	sessionsv1alpha1.VerbSetSendPolicy)

// JudgeRelabel lists the routing fields a session write sets or changes, from old (nil on
// create) to cur. A create is judged against what the key implies, so a new session under
// an old key (delete and recreate) gets no other label than an update would. Values equal
// to what the key implies are no change: "chatType: direct" on a main key needs nothing.
func JudgeRelabel(old, cur *sessionsv1alpha1.AgentSessionSpec) []Relabel {
	k, _ := sessionkey.Parse(cur.Key)
	if old == nil {
		old = &sessionsv1alpha1.AgentSessionSpec{Key: cur.Key}
	}
	was, now := routingOf(k, old), routingOf(k, cur)
	var out []Relabel
	for i, f := range routingFields {
		if was[i] == now[i] {
			continue
		}
		r := Relabel{Field: f, Value: now[i], Reason: relabelNeedsVerb}
		if why := contradiction(k, f, cur); why != "" {
			r.Contradicts, r.Reason = true, why
		}
		out = append(out, r)
	}
	return out
}

var routingFields = [...]string{FieldChannel, FieldChatType, FieldLastChannel, FieldLastTo, FieldDeliveryContext}

// routingOf is the routing fields of spec in the order of routingFields, normalized as the
// policy reads them: channel, chat type and lastChannel default to the key's.
func routingOf(k sessionkey.Key, spec *sessionsv1alpha1.AgentSessionSpec) [len(routingFields)]string {
	channel := normChannel(string(spec.Channel))
	if channel == "" {
		channel = k.Channel
	}
	chatType := string(spec.ChatType)
	if chatType == "" {
		chatType = keyChatType(k)
	}
	lastChannel := normChannel(spec.LastChannel)
	if lastChannel == "" {
		lastChannel = k.Channel
	}
	return [...]string{channel, chatType, lastChannel, spec.LastTo, describeContext(spec.DeliveryContext)}
}

// contradiction says why field of spec contradicts a key that names a channel and chat
// type, or "".
func contradiction(k sessionkey.Key, field string, spec *sessionsv1alpha1.AgentSessionSpec) string {
	if k.Channel == "" {
		return ""
	}
	keyDecides := fmt.Sprintf("session key %s names channel %s and chat type %s, and the key decides what the send policy judges (the relabelling rule): ",
		k.Raw, k.Channel, keyChatType(k))
	otherKey := "; a conversation elsewhere is another session: create it under its own key"
	channel := func(v string) string {
		if v = normChannel(v); v != "" && v != k.Channel {
			return fmt.Sprintf("%sspec.%s must be %s or unset, not %s%s", keyDecides, field, k.Channel, v, otherKey)
		}
		return ""
	}
	to := func(v string) string {
		if ct := sessionkey.ChatTypeOfTo(v); ct != "" && ct != k.ChatType {
			return fmt.Sprintf("%sthe recipient %q names a %s chat, not a %s one%s", keyDecides, v, ct, k.ChatType, otherKey)
		}
		return ""
	}
	switch field {
	case FieldChannel:
		return channel(string(spec.Channel))
	case FieldLastChannel:
		return channel(spec.LastChannel)
	case FieldChatType:
		if spec.ChatType != "" && string(spec.ChatType) != keyChatType(k) {
			return fmt.Sprintf("%sspec.chatType must be %s or unset, not %s%s", keyDecides, keyChatType(k), spec.ChatType, otherKey)
		}
	case FieldLastTo:
		return to(spec.LastTo)
	case FieldDeliveryContext:
		if dc := spec.DeliveryContext; dc != nil {
			if why := channel(dc.Channel); why != "" {
				return strings.Replace(why, "spec.deliveryContext", "spec.deliveryContext.channel", 1)
			}
			return to(dc.To)
		}
	}
	return ""
}

func normChannel(c string) string { return strings.ToLower(strings.TrimSpace(c)) }

// describeContext renders a delivery context for comparison and for answers (quoted, so
// two contexts never render alike); nil and an empty context are the same.
func describeContext(dc *sessionsv1alpha1.DeliveryContext) string {
	if dc == nil || *dc == (sessionsv1alpha1.DeliveryContext{}) {
		return ""
	}
	return fmt.Sprintf("{channel: %q, to: %q, accountId: %q, threadId: %q}", dc.Channel, dc.To, dc.AccountID, dc.ThreadID)
}
