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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestDestinationOf(t *testing.T) {
	cases := map[string]struct {
		s    *sessionsv1alpha1.AgentSession
		want sessionsv1alpha1.DeliveryContext
	}{
		"the session's channel and lastTo": {
			s:    session("agent:main:main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.LastChannel, s.Spec.LastTo = "webchat", "alice" }),
			want: sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: "alice"},
		},
		"the delivery context wins, lastTo included": {
			s: session("agent:main:main", func(s *sessionsv1alpha1.AgentSession) {
				s.Spec.LastChannel, s.Spec.LastTo = "webchat", "alice"
				s.Spec.DeliveryContext = &sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "group:7", AccountID: "a", ThreadID: "t"}
			}),
			want: sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "group:7", AccountID: "a", ThreadID: "t"},
		},
		"a delivery context without a channel takes the session's": {
			s: session("agent:main:discord:group:7", func(s *sessionsv1alpha1.AgentSession) {
				s.Spec.DeliveryContext = &sessionsv1alpha1.DeliveryContext{To: "group:7"}
			}),
			want: sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "group:7"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DestinationOf(tc.s)); diff != "" {
				t.Errorf("DestinationOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideDelivery(t *testing.T) {
	denyDiscordGroups := &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{Channel: "discord", ChatType: sessionsv1alpha1.ChatTypeGroup}, Action: sessionsv1alpha1.ActionDeny}}}
	allowWebchatOnly := &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{Channel: "webchat"}, Action: sessionsv1alpha1.ActionAllow}}, Default: sessionsv1alpha1.ActionDeny}
	webchatMain := func(mut ...func(*sessionsv1alpha1.AgentSession)) *sessionsv1alpha1.AgentSession {
		return session("agent:main:main", append([]func(*sessionsv1alpha1.AgentSession){func(s *sessionsv1alpha1.AgentSession) { s.Spec.LastChannel = "webchat" }}, mut...)...)
	}
	allowOverride := func(s *sessionsv1alpha1.AgentSession) { s.Spec.SendPolicy = sessionsv1alpha1.ActionAllow }
	cases := map[string]struct {
		p          *sessionsv1alpha1.SendPolicySpec
		s          *sessionsv1alpha1.AgentSession
		dc         sessionsv1alpha1.DeliveryContext
		want       SendDecision
		wantReason string
	}{
		"the session's own chat": {
			p: denyDiscordGroups, s: webchatMain(), dc: sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: "alice"},
			want: SendDecision{Allowed: true, By: DecidedByDefault},
		},
		"an allowed session rerouted to a denied discord group": {
			p: denyDiscordGroups, s: webchatMain(), dc: sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "group:7"},
			want: SendDecision{By: DecidedByRule, Rule: 1},
			wantReason: "the announce goes to group chat group:7 on discord (spec.lastTo), not to the session's own direct chat on webchat: " +
				"denied by sessionPolicy default rule 1 (channel=discord, chatType=group -> deny); point spec.lastTo at an allowed chat or change the rule",
		},
		"the recipient's chat type counts on the session's own channel": {
			p: &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{Channel: "webchat", ChatType: sessionsv1alpha1.ChatTypeGroup}, Action: sessionsv1alpha1.ActionDeny}}},
			s: webchatMain(), dc: sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: "group:lobby"},
			want: SendDecision{By: DecidedByRule, Rule: 1},
		},
		"a recipient naming no chat type on the session's channel is the session's chat type": {
			p:    &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{Channel: "webchat", ChatType: sessionsv1alpha1.ChatTypeGroup}, Action: sessionsv1alpha1.ActionDeny}}},
			s:    webchatMain(),
			dc:   sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: "alice"},
			want: SendDecision{Allowed: true, By: DecidedByDefault},
		},
		"a recipient naming no chat type on another channel is judged as every chat type": {
			p: denyDiscordGroups, s: webchatMain(), dc: sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "alice"},
			want:       SendDecision{By: DecidedByRule, Rule: 1},
			wantReason: "the announce goes to chat of unnamed type (judged as a group; name it: direct:<peer>, group:<id>) alice on discord (spec.lastTo)",
		},
		"a recipient naming a direct chat on another channel": {
			p: denyDiscordGroups, s: webchatMain(), dc: sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "direct:alice"},
			want: SendDecision{Allowed: true, By: DecidedByDefault},
		},
		"a default deny judges the destination too": {
			p: allowWebchatOnly, s: webchatMain(func(s *sessionsv1alpha1.AgentSession) {
				s.Spec.DeliveryContext = &sessionsv1alpha1.DeliveryContext{Channel: "telegram"}
			}),
			dc:         sessionsv1alpha1.DeliveryContext{Channel: "telegram"},
			want:       SendDecision{By: DecidedByDefault},
			wantReason: "(spec.deliveryContext), not to the session's own direct chat on webchat: denied by sessionPolicy default (no rule matched, sendPolicy.default=deny); point spec.deliveryContext at an allowed chat",
		},
		"the session's override does not carry an announce elsewhere": {
			p: denyDiscordGroups, s: webchatMain(allowOverride), dc: sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "group:7"},
			want: SendDecision{By: DecidedByRule, Rule: 1},
		},
		"the session's override allows its own chat": {
			p:    denyDiscordGroups,
			s:    session("agent:main:discord:group:7", allowOverride),
			dc:   sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "group:7"},
			want: SendDecision{Allowed: true, By: DecidedBySession},
		},
		"a denied session stays denied whatever its destination": {
			p:          denyDiscordGroups,
			s:          session("agent:main:discord:group:7"),
			dc:         sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: "alice"},
			want:       SendDecision{By: DecidedByRule, Rule: 1},
			wantReason: "send denied by sessionPolicy default rule 1",
		},
		"no policy allows": {
			s: webchatMain(), dc: sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "group:7"},
			want: SendDecision{Allowed: true, By: DecidedByBuiltin},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DecideDelivery(tc.p, tc.s, tc.dc)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(SendDecision{}, "Reason")); diff != "" {
				t.Errorf("DecideDelivery (-want +got):\n%s", diff)
			}
			if !strings.Contains(got.Reason, tc.wantReason) {
				t.Errorf("reason %q does not contain %q", got.Reason, tc.wantReason)
			}
		})
	}
}

func TestRouteOf(t *testing.T) {
	pol := &sessionsv1alpha1.SessionPolicy{Spec: sessionsv1alpha1.SessionPolicySpec{Delivery: []sessionsv1alpha1.DeliverySink{
		{Channel: "telegram", Kind: sessionsv1alpha1.DeliveryTelegram}, {Channel: "webchat", Kind: sessionsv1alpha1.DeliveryWebhook, URL: "https://h"}}}}
	session := func(key string, mod func(*sessionsv1alpha1.AgentSession)) *sessionsv1alpha1.AgentSession {
		s := &sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main"}}
		if mod != nil {
			mod(s)
		}
		return s
	}
	cases := map[string]struct {
		s                   *sessionsv1alpha1.AgentSession
		wantSink            bool
		wantTo, wantProblem string
	}{
		"chat id from the key": {s: session("agent:main:telegram:group:-1001234", nil), wantSink: true, wantTo: "-1001234"},
		"deliveryContext.to first": {s: session("agent:main:telegram:group:-1", func(s *sessionsv1alpha1.AgentSession) {
			s.Spec.LastTo = "-2"
			s.Spec.DeliveryContext = &sessionsv1alpha1.DeliveryContext{To: "telegram:group:-3"}
		}), wantSink: true, wantTo: "-3"},
		"lastTo before the key": {s: session("agent:main:telegram:group:-1", func(s *sessionsv1alpha1.AgentSession) { s.Spec.LastTo = "-2" }), wantSink: true, wantTo: "-2"},
		"no chat id": {s: session("agent:main:main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.Channel = "telegram" }), wantSink: true,
			wantProblem: "no telegram chat id: set spec.deliveryContext.to or spec.lastTo (its key names no chat)"},
		"webhook keeps to": {s: session("agent:main:main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.Channel = "webchat"; s.Spec.LastTo = "alice" }), wantSink: true, wantTo: "alice"},
		"no sink":          {s: session("agent:main:discord:group:7", nil), wantTo: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := RouteOf(pol, tc.s)
			if (r.Sink != nil) != tc.wantSink || r.To != tc.wantTo || r.Problem != tc.wantProblem {
				t.Errorf("RouteOf = sink %v, to %q, problem %q", r.Sink != nil, r.To, r.Problem)
			}
		})
	}
}
