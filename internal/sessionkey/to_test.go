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
	"strings"
	"testing"
)

func TestChatTypeOfTo(t *testing.T) {
	cases := map[string]string{
		"group:7":           ChatTypeGroup,
		"channel:C1":        ChatTypeChannel,
		"direct:+1555":      ChatTypeDirect,
		" group:7":          ChatTypeGroup,
		"discord:group:7":   ChatTypeGroup,
		"group :7":          ChatTypeGroup,
		"discord: group :7": ChatTypeGroup,
		"slack:channel:C1":  ChatTypeChannel,
		"group:":            ChatTypeGroup,
		"room-1":            "",
		"alice":             "",
		"":                  "",
		"groups:7":          "",
		"a:b:group:7":       "",
		"Group:7":           ChatTypeGroup,
	}
	for to, want := range cases {
		if got := ChatTypeOfTo(to); got != want {
			t.Errorf("ChatTypeOfTo(%q) = %q, want %q", to, got, want)
		}
	}
}

// FuzzChatTypeOfTo: a recipient comes from whoever writes the session, so any string must
// give one of the grammar's chat types or none, and a leading chat type always counts.
func FuzzChatTypeOfTo(f *testing.F) {
	for _, s := range []string{"group:7", "discord:group:7", "alice", "", "\xff:group", "GROUP:x", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, to string) {
		got := ChatTypeOfTo(to)
		if got != "" && !isChatType(got) {
			t.Fatalf("ChatTypeOfTo(%q) = %q, not a chat type", to, got)
		}
		if got == "" && isChatType(strings.ToLower(strings.TrimSpace(strings.SplitN(to, ":", 2)[0]))) && strings.Contains(to, ":") {
			t.Fatalf("ChatTypeOfTo(%q) missed its leading chat type", to)
		}
	})
}
