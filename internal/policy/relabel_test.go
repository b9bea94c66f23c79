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

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestJudgeRelabel(t *testing.T) {
	const group, main = "agent:main:discord:group:7", "agent:main:main"
	spec := func(key string, mut ...func(*sessionsv1alpha1.AgentSessionSpec)) *sessionsv1alpha1.AgentSessionSpec {
		s := &sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main"}
		for _, m := range mut {
			m(s)
		}
		return s
	}
	dc := func(channel, to string) func(*sessionsv1alpha1.AgentSessionSpec) {
		return func(s *sessionsv1alpha1.AgentSessionSpec) {
			s.DeliveryContext = &sessionsv1alpha1.DeliveryContext{Channel: channel, To: to}
		}
	}
	// field: "!" marks a contradiction, "+" a change that needs the verb.
	cases := map[string]struct {
		old, cur *sessionsv1alpha1.AgentSessionSpec
		want     []string
	}{
		"create: the key's own channel and chat type": {
			cur: spec(group, func(s *sessionsv1alpha1.AgentSessionSpec) {
				s.Channel, s.ChatType, s.LastChannel = "discord", sessionsv1alpha1.ChatTypeGroup, "Discord"
			}),
		},
		"create: main key, chatType direct is implied": {
			cur: spec(main, func(s *sessionsv1alpha1.AgentSessionSpec) { s.ChatType = sessionsv1alpha1.ChatTypeDirect }),
		},
		"create: a group key relabelled as webchat": {
			cur:  spec(group, func(s *sessionsv1alpha1.AgentSessionSpec) { s.Channel = "webchat" }),
			want: []string{"!channel"},
		},
		"create: a group key as a direct chat": {
			cur:  spec(group, func(s *sessionsv1alpha1.AgentSessionSpec) { s.ChatType = sessionsv1alpha1.ChatTypeDirect }),
			want: []string{"!chatType"},
		},
		"create: a room key keeps room": {
			cur: spec("agent:main:slack:channel:c1", func(s *sessionsv1alpha1.AgentSessionSpec) { s.ChatType = sessionsv1alpha1.ChatTypeRoom }),
		},
		"create: main key with a lastChannel": {
			cur:  spec(main, func(s *sessionsv1alpha1.AgentSessionSpec) { s.LastChannel = "webchat" }),
			want: []string{"+lastChannel"},
		},
		"create: main key as a group": {
			cur:  spec(main, func(s *sessionsv1alpha1.AgentSessionSpec) { s.ChatType = sessionsv1alpha1.ChatTypeGroup }),
			want: []string{"+chatType"},
		},
		"create: a delivery context": {
			cur:  spec(main, dc("webchat", "room-1")),
			want: []string{"+deliveryContext"},
		},
		"update: nothing routing changes": {
			old: spec(main, func(s *sessionsv1alpha1.AgentSessionSpec) { s.LastChannel = "webchat" }),
			cur: spec(main, func(s *sessionsv1alpha1.AgentSessionSpec) { s.LastChannel, s.Label = "webchat", "renamed" }),
		},
		"update: setting the key's channel is no change": {
			old: spec(group),
			cur: spec(group, func(s *sessionsv1alpha1.AgentSessionSpec) { s.Channel = "discord" }),
		},
		"update: every routing field": {
			old: spec(main),
			cur: spec(main, dc("discord", "group:7"), func(s *sessionsv1alpha1.AgentSessionSpec) {
				s.Channel, s.ChatType, s.LastChannel, s.LastTo = "webchat", sessionsv1alpha1.ChatTypeGroup, "webchat", "alice"
			}),
			want: []string{"+channel", "+chatType", "+lastChannel", "+lastTo", "+deliveryContext"},
		},
		"update: unsetting a delivery context": {
			old:  spec(main, dc("webchat", "room-1")),
			cur:  spec(main),
			want: []string{"+deliveryContext"},
		},
		"update: an empty delivery context is none": {
			old: spec(main),
			cur: spec(main, func(s *sessionsv1alpha1.AgentSessionSpec) { s.DeliveryContext = &sessionsv1alpha1.DeliveryContext{} }),
		},
		"update: values that would render alike still differ": {
			old: spec(main, func(s *sessionsv1alpha1.AgentSessionSpec) {
				s.DeliveryContext = &sessionsv1alpha1.DeliveryContext{Channel: "a", To: `b", accountId: "c`}
			}),
			cur: spec(main, func(s *sessionsv1alpha1.AgentSessionSpec) {
				s.DeliveryContext = &sessionsv1alpha1.DeliveryContext{Channel: "a", To: "b", AccountID: `c", accountId: "`}
			}),
			want: []string{"+deliveryContext"},
		},
		"update: a group's delivery context to another channel": {
			old:  spec(group),
			cur:  spec(group, dc("webchat", "")),
			want: []string{"!deliveryContext"},
		},
		"update: a group's delivery to a direct chat": {
			old:  spec(group),
			cur:  spec(group, dc("", "direct:bob")),
			want: []string{"!deliveryContext"},
		},
		"update: a group's lastTo to another group of its channel": {
			old:  spec(group),
			cur:  spec(group, func(s *sessionsv1alpha1.AgentSessionSpec) { s.LastTo = "group:8" }),
			want: []string{"+lastTo"},
		},
		"update: a group's lastChannel elsewhere": {
			old:  spec(group),
			cur:  spec(group, func(s *sessionsv1alpha1.AgentSessionSpec) { s.LastChannel = "webchat" }),
			want: []string{"!lastChannel"},
		},
		"update: a legacy group key decides too": {
			old:  spec("discord:group:7"),
			cur:  spec("discord:group:7", func(s *sessionsv1alpha1.AgentSessionSpec) { s.Channel = "webchat" }),
			want: []string{"!channel"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, r := range JudgeRelabel(tc.old, tc.cur) {
				mark := "+"
				if r.Contradicts {
					mark = "!"
				}
				got = append(got, mark+r.Field)
				if r.Reason == "" {
					t.Errorf("%s: no reason", r.Field)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("JudgeRelabel (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJudgeRelabelReasons(t *testing.T) {
	got := JudgeRelabel(nil, &sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:discord:group:7", Channel: "webchat"})
	want := "session key agent:main:discord:group:7 names channel discord and chat type group, and the key decides what the send policy judges (the relabelling rule): spec.channel must be discord or unset, not webchat; a conversation elsewhere is another session"
	if len(got) != 1 || !strings.Contains(got[0].Reason, want) {
		t.Errorf("contradiction reason = %+v, want it to contain %q", got, want)
	}
	got = JudgeRelabel(&sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:main"}, &sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:main", LastTo: "bob"})
	want = "the send policy and announce delivery decide on it (the relabelling rule), so setting or changing it needs the verb set-send-policy on the session"
	if len(got) != 1 || got[0].Value != "bob" || !strings.Contains(got[0].Reason, want) {
		t.Errorf("change reason = %+v, want it to contain %q", got, want)
	}
	got = JudgeRelabel(&sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:discord:group:7"},
		&sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:discord:group:7", DeliveryContext: &sessionsv1alpha1.DeliveryContext{Channel: "webchat"}})
	want = "spec.deliveryContext.channel must be discord or unset, not webchat"
	if len(got) != 1 || !strings.Contains(got[0].Reason, want) {
		t.Errorf("delivery context reason = %+v, want it to contain %q", got, want)
	}
}
