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
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestParseSendCommand(t *testing.T) {
	cases := map[string]struct {
		msg  string
		want *SendCommand
	}{
		"on":                  {msg: "/send on", want: &SendCommand{Word: "on", Policy: sessionsv1alpha1.ActionAllow}},
		"off, spaced":         {msg: "  /send   off \n", want: &SendCommand{Word: "off", Policy: sessionsv1alpha1.ActionDeny}},
		"inherit":             {msg: "/send inherit", want: &SendCommand{Word: "inherit"}},
		"not standalone":      {msg: "please /send on"},
		"more words":          {msg: "/send on now"},
		"another word":        {msg: "/send maybe"},
		"upper case":          {msg: "/SEND ON"},
		"no argument":         {msg: "/send"},
		"an ordinary message": {msg: "hello"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ParseSendCommand(tc.msg)
			if (tc.want != nil) != ok {
				t.Fatalf("ok = %v", ok)
			}
			if ok {
				if diff := cmp.Diff(*tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
		})
	}
	if _, ok := IsSendCommand(&sessionsv1alpha1.SessionSendSpec{Message: "/send on", FromSessionKey: "agent:a:main"}); ok {
		t.Errorf("a session's /send on is a command")
	}
	if _, ok := IsSendCommand(&sessionsv1alpha1.SessionSendSpec{Message: "/send on"}); !ok {
		t.Errorf("a person's /send on is no command")
	}
}

func TestSendCommandDenial(t *testing.T) {
	on := SendCommand{Word: "on", Policy: sessionsv1alpha1.ActionAllow}
	cases := map[string]struct {
		from string
		may  bool
		want string
	}{
		"a person with the verb": {may: true},
		"a person without it": {want: `user "alice" may not send /send on into session agent:a:main: the command sets spec.sendPolicy, ` +
			`so it needs the verb set-send-policy on agentsessions/agent-a-main (the agent-sessions-send-admin ClusterRole)`},
		"a session": {from: "agent:b:main", may: true, want: "/send on is a person's command to set the send policy of session agent:a:main (owner-only): " +
			"session agent:b:main may not send it; send other text"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SendCommandDenial(on, tc.from, "alice", "agent:a:main", "agent-a-main", tc.may); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
