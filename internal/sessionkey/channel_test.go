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

package sessionkey

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChannelOf(t *testing.T) {
	cases := map[string]struct {
		key                         string
		sessionChannel, lastChannel string
		want                        string
	}{
		"group: session channel wins":               {key: "agent:a:discord:group:1", sessionChannel: "telegram", lastChannel: "signal", want: "telegram"},
		"group: key channel when session has none":  {key: "agent:a:discord:group:1", lastChannel: "signal", want: "discord"},
		"group: lastChannel is not used":            {key: "agent:a:discord:channel:1", lastChannel: "signal", want: "discord"},
		"legacy group: key channel":                 {key: "whatsapp:group:1", want: "whatsapp"},
		"legacy group: session channel wins":        {key: "whatsapp:group:1", sessionChannel: "imessage", want: "imessage"},
		"main: lastChannel":                         {key: "agent:a:main", sessionChannel: "webchat", lastChannel: "telegram", want: "telegram"},
		"main alias: lastChannel":                   {key: "main", lastChannel: "signal", want: "signal"},
		"main: session channel when no lastChannel": {key: "agent:a:main", sessionChannel: "webchat", want: "webchat"},
		"main: nothing recorded":                    {key: "agent:a:main", want: "unknown"},
		"direct: lastChannel wins over key":         {key: "agent:a:telegram:direct:9", lastChannel: "whatsapp", want: "whatsapp"},
		"direct: key channel":                       {key: "agent:a:telegram:direct:9", sessionChannel: "webchat", want: "telegram"},
		"subagent: nothing recorded":                {key: "agent:a:subagent:u", want: "unknown"},
		"subagent: lastChannel":                     {key: "agent:a:subagent:u", lastChannel: "discord", want: "discord"},
		"other: lastChannel":                        {key: "agent:a:project", lastChannel: "slack", want: "slack"},
		"cron is internal":                          {key: "cron:x", sessionChannel: "telegram", lastChannel: "discord", want: "internal"},
		"hook is internal":                          {key: "hook:x", lastChannel: "discord", want: "internal"},
		"node is internal":                          {key: "node-x", want: "internal"},
		"group: nothing recorded":                   {key: "agent:a:x:group:1", want: "x"},
		"values are trimmed and lower-cased":        {key: "agent:a:main", lastChannel: "  Telegram ", want: "telegram"},
		"blank value counts as missing":             {key: "agent:a:main", lastChannel: "   ", sessionChannel: "signal", want: "signal"},
		"unknown reserved key":                      {key: "unknown", want: "unknown"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k, err := Parse(tc.key)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.key, err)
			}
			got := ChannelOf(k, tc.sessionChannel, tc.lastChannel)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ChannelOf(%q, %q, %q) mismatch (-want +got):\n%s", tc.key, tc.sessionChannel, tc.lastChannel, diff)
			}
		})
	}
}

// A group whose key and session carry no channel cannot be built by Parse,
// but a zero Key (a caller that skipped parsing) must still get "unknown".
func TestChannelOfZeroKey(t *testing.T) {
	if got := ChannelOf(Key{Kind: KindGroup}, "", ""); got != ChannelUnknown {
		t.Errorf("ChannelOf(group without channel) = %q, want %q", got, ChannelUnknown)
	}
	if got := ChannelOf(Key{}, "", ""); got != ChannelUnknown {
		t.Errorf("ChannelOf(Key{}) = %q, want %q", got, ChannelUnknown)
	}
}
