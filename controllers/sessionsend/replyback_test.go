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

package sessionsend

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestNextPingPong(t *testing.T) {
	turn := func(session, reply string) sessionsv1alpha1.SendTurn {
		return sessionsv1alpha1.SendTurn{Session: session, Reply: reply, Skipped: endsPingPong(reply)}
	}
	const a, b = "agent:a:main", "agent:b:main"
	cases := map[string]struct {
		turns       []sessionsv1alpha1.SendTurn
		from        string
		max         int
		wantRound   int
		wantSession string
		wantOK      bool
	}{
		"no requester: no reply-back":      {turns: []sessionsv1alpha1.SendTurn{turn(b, "hi")}, max: 5},
		"requester is the target":          {turns: []sessionsv1alpha1.SendTurn{turn(b, "hi")}, from: b, max: 5},
		"round 2 runs in the requester":    {turns: []sessionsv1alpha1.SendTurn{turn(b, "hi")}, from: a, max: 5, wantRound: 2, wantSession: a, wantOK: true},
		"round 3 runs in the target":       {turns: []sessionsv1alpha1.SendTurn{turn(b, "hi"), turn(a, "yo")}, from: a, max: 5, wantRound: 3, wantSession: b, wantOK: true},
		"REPLY_SKIP stops":                 {turns: []sessionsv1alpha1.SendTurn{turn(b, "hi"), turn(a, sessionsv1alpha1.ReplySkip)}, from: a, max: 5},
		"REPLY_SKIP with a newline stops":  {turns: []sessionsv1alpha1.SendTurn{turn(b, sessionsv1alpha1.ReplySkip+"\n")}, from: a, max: 5},
		"empty reply stops":                {turns: []sessionsv1alpha1.SendTurn{turn(b, "  ")}, from: a, max: 5},
		"REPLY_SKIP inside a text goes on": {turns: []sessionsv1alpha1.SendTurn{turn(b, "say REPLY_SKIP")}, from: a, max: 5, wantRound: 2, wantSession: a, wantOK: true},
		"maxPingPongTurns 0":               {turns: []sessionsv1alpha1.SendTurn{turn(b, "hi")}, from: a, max: 0},
		"maxPingPongTurns reached":         {turns: []sessionsv1alpha1.SendTurn{turn(b, "1"), turn(a, "2"), turn(b, "3")}, from: a, max: 2},
		"a failed turn stops":              {turns: []sessionsv1alpha1.SendTurn{{Session: b, Reply: "x", Error: "boom"}}, from: a, max: 5},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			round, session, ok := nextPingPong(tc.turns, tc.from, b, tc.max)
			if round != tc.wantRound || session != tc.wantSession || ok != tc.wantOK {
				t.Errorf("got (%d, %q, %v), want (%d, %q, %v)", round, session, ok, tc.wantRound, tc.wantSession, tc.wantOK)
			}
		})
	}
}

func TestLatestReply(t *testing.T) {
	turn := func(reply string) sessionsv1alpha1.SendTurn {
		return sessionsv1alpha1.SendTurn{Reply: reply, Skipped: endsPingPong(reply)}
	}
	cases := map[string]struct {
		turns []sessionsv1alpha1.SendTurn
		want  string
	}{
		"round 1 only":                  {turns: []sessionsv1alpha1.SendTurn{turn("hi")}, want: "hi"},
		"the last ping-pong reply":      {turns: []sessionsv1alpha1.SendTurn{turn("hi"), turn("yo"), turn("bye")}, want: "bye"},
		"not the REPLY_SKIP that ended": {turns: []sessionsv1alpha1.SendTurn{turn("hi"), turn("yo"), turn(sessionsv1alpha1.ReplySkip)}, want: "yo"},
		"not an empty reply":            {turns: []sessionsv1alpha1.SendTurn{turn("hi"), turn(" \n")}, want: "hi"},
		"not a failed turn":             {turns: []sessionsv1alpha1.SendTurn{turn("hi"), {Reply: "half", Error: "boom"}}, want: "hi"},
		"not a turn the policy stopped": {turns: []sessionsv1alpha1.SendTurn{turn("hi"), {Skipped: true, Error: "reply-back stopped: deny"}}, want: "hi"},
		"nothing real":                  {turns: []sessionsv1alpha1.SendTurn{turn(sessionsv1alpha1.ReplySkip)}, want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, latestReply(tc.turns).Reply); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
