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

import "testing"

func TestChatIDOfTo(t *testing.T) {
	cases := map[string]string{
		"-1001234":                "-1001234",
		"group:-1001234":          "-1001234",
		"telegram:group:-1001234": "-1001234",
		"slack:channel:C0123":     "C0123",
		"Direct: 15551234567":     "15551234567",
		"@mychannel":              "@mychannel",
		"":                        "",
		"user:42":                 "user:42",
		"discord:thread:99":       "discord:thread:99",
	}
	for to, want := range cases {
		if got := ChatIDOfTo(to); got != want {
			t.Errorf("ChatIDOfTo(%q) = %q, want %q", to, got, want)
		}
	}
}

func TestChatIDOfKey(t *testing.T) {
	cases := map[string]struct{ key, channel, want string }{
		"telegram group": {"agent:main:telegram:group:-1001234", "telegram", "-1001234"},
		"slack channel":  {"agent:main:slack:channel:C0123", "slack", "C0123"},
		"direct peer":    {"agent:main:whatsapp:direct:15551234567", "whatsapp", "15551234567"},
		"other channel":  {"agent:main:slack:channel:C0123", "telegram", ""},
		"main":           {"agent:main:main", "telegram", ""},
		"subagent":       {"agent:main:subagent:123", "telegram", ""},
		"not a key":      {"::", "telegram", ""},
	}
	for name, tc := range cases {
		if got := ChatIDOfKey(tc.key, tc.channel); got != tc.want {
			t.Errorf("%s: ChatIDOfKey(%q, %q) = %q, want %q", name, tc.key, tc.channel, got, tc.want)
		}
	}
}
