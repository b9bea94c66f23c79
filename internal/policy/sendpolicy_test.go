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

func session(key string, mut ...func(*sessionsv1alpha1.AgentSession)) *sessionsv1alpha1.AgentSession {
	s := &sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Key: key}}
	for _, m := range mut {
		m(s)
	}
	return s
}

func TestTargetOf(t *testing.T) {
	cases := map[string]struct {
		s    *sessionsv1alpha1.AgentSession
		want SendTarget
	}{
		"group key gives channel and chat type": {
			s:    session("agent:main:discord:group:42"),
			want: SendTarget{Key: "agent:main:discord:group:42", Channel: "discord", ChatType: "group"},
		},
		"channel key is a room": {
			s:    session("agent:main:slack:channel:c1"),
			want: SendTarget{Key: "agent:main:slack:channel:c1", Channel: "slack", ChatType: "room"},
		},
		"main key is direct and takes lastChannel": {
			s:    session("agent:main:main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.LastChannel = "Telegram" }),
			want: SendTarget{Key: "agent:main:main", Channel: "telegram", ChatType: "direct"},
		},
		"a group key decides over a relabelled spec": {
			s: session("agent:main:discord:group:42", func(s *sessionsv1alpha1.AgentSession) {
				s.Spec.Channel, s.Spec.ChatType, s.Spec.LastChannel = "webchat", sessionsv1alpha1.ChatTypeDirect, "webchat"
			}),
			want: SendTarget{Key: "agent:main:discord:group:42", Channel: "discord", ChatType: "group"},
		},
		"a direct key decides over lastChannel": {
			s:    session("agent:main:telegram:direct:9", func(s *sessionsv1alpha1.AgentSession) { s.Spec.LastChannel = "webchat" }),
			want: SendTarget{Key: "agent:main:telegram:direct:9", Channel: "telegram", ChatType: "direct"},
		},
		"cron is internal": {
			s:    session("cron:nightly"),
			want: SendTarget{Key: "cron:nightly", Channel: "internal"},
		},
		"spec chat type and override win": {
			s: session("agent:main:main", func(s *sessionsv1alpha1.AgentSession) {
				s.Spec.ChatType, s.Spec.SendPolicy = sessionsv1alpha1.ChatTypeGroup, sessionsv1alpha1.ActionDeny
			}),
			want: SendTarget{Key: "agent:main:main", Channel: "unknown", ChatType: "group", Override: sessionsv1alpha1.ActionDeny},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, TargetOf(tc.s)); diff != "" {
				t.Errorf("TargetOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideSend(t *testing.T) {
	discordGroup := SendTarget{Key: "agent:main:discord:group:1", Channel: "discord", ChatType: "group"}
	denyDiscordGroups := sessionsv1alpha1.SendRule{Match: sessionsv1alpha1.SendRuleMatch{Channel: "discord", ChatType: sessionsv1alpha1.ChatTypeGroup}, Action: sessionsv1alpha1.ActionDeny}
	allowDiscord := sessionsv1alpha1.SendRule{Match: sessionsv1alpha1.SendRuleMatch{Channel: "discord"}, Action: sessionsv1alpha1.ActionAllow}
	allowMainPrefix := sessionsv1alpha1.SendRule{Match: sessionsv1alpha1.SendRuleMatch{KeyPrefix: "agent:main:"}, Action: sessionsv1alpha1.ActionAllow}
	cases := map[string]struct {
		p          *sessionsv1alpha1.SendPolicySpec
		t          SendTarget
		want       SendDecision
		wantReason string
	}{
		"no policy allows": {
			t:    discordGroup,
			want: SendDecision{Allowed: true, By: DecidedByBuiltin},
		},
		"empty policy allows by default": {
			p:    &sessionsv1alpha1.SendPolicySpec{},
			t:    discordGroup,
			want: SendDecision{Allowed: true, By: DecidedByDefault},
		},
		"default deny": {
			p:          &sessionsv1alpha1.SendPolicySpec{Default: sessionsv1alpha1.ActionDeny},
			t:          discordGroup,
			want:       SendDecision{By: DecidedByDefault},
			wantReason: "sendPolicy.default=deny); set spec.sendPolicy=allow on the session or add an allow rule",
		},
		"matching deny names the rule": {
			p:          &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{allowMainPrefix, denyDiscordGroups}, Default: sessionsv1alpha1.ActionAllow},
			t:          discordGroup,
			want:       SendDecision{By: DecidedByRule, Rule: 2},
			wantReason: "send denied by sessionPolicy default rule 2 (channel=discord, chatType=group -> deny); set spec.sendPolicy=allow on the session or change the rule",
		},
		"deny wins over an earlier allow": {
			p:    &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{allowDiscord, denyDiscordGroups}},
			t:    discordGroup,
			want: SendDecision{By: DecidedByRule, Rule: 2},
		},
		"first of two denies decides": {
			p:    &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{KeyPrefix: "agent:"}, Action: sessionsv1alpha1.ActionDeny}, denyDiscordGroups}},
			t:    discordGroup,
			want: SendDecision{By: DecidedByRule, Rule: 1},
		},
		"matching allow beats a default deny": {
			p:    &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{allowDiscord}, Default: sessionsv1alpha1.ActionDeny},
			t:    discordGroup,
			want: SendDecision{Allowed: true, By: DecidedByRule, Rule: 1},
		},
		"all fields of a match must hold": {
			p:    &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{denyDiscordGroups}},
			t:    SendTarget{Key: "agent:main:discord:channel:1", Channel: "discord", ChatType: "room"},
			want: SendDecision{Allowed: true, By: DecidedByDefault},
		},
		"channel matches case-insensitively": {
			p:    &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{Channel: "discord"}, Action: sessionsv1alpha1.ActionDeny}}},
			t:    SendTarget{Key: "k", Channel: "Discord"},
			want: SendDecision{By: DecidedByRule, Rule: 1},
		},
		"session allow overrides a deny rule": {
			p:    &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{denyDiscordGroups}, Default: sessionsv1alpha1.ActionDeny},
			t:    SendTarget{Key: discordGroup.Key, Channel: "discord", ChatType: "group", Override: sessionsv1alpha1.ActionAllow},
			want: SendDecision{Allowed: true, By: DecidedBySession},
		},
		"session deny overrides an allow rule": {
			p:          &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{allowDiscord}},
			t:          SendTarget{Key: discordGroup.Key, Channel: "discord", Override: sessionsv1alpha1.ActionDeny},
			want:       SendDecision{By: DecidedBySession},
			wantReason: "session's spec.sendPolicy=deny",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DecideSend(tc.p, tc.t)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(SendDecision{}, "Reason")); diff != "" {
				t.Errorf("DecideSend (-want +got):\n%s", diff)
			}
			if !strings.Contains(got.Reason, tc.wantReason) {
				t.Errorf("reason %q does not contain %q", got.Reason, tc.wantReason)
			}
		})
	}
}
