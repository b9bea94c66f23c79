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
)

func TestSubagentOffers(t *testing.T) {
	cases := map[string]struct {
		allow       []string
		name        string
		sessionTool bool
		want        bool
	}{
		"default: a non-session tool":          {name: "mcp__everything__echo", want: true},
		"default: no session tool":             {name: "sessions_history", sessionTool: true},
		"a list: a named non-session tool":     {allow: []string{"mcp__everything__echo"}, name: "mcp__everything__echo", want: true},
		"a list: an unnamed non-session tool":  {allow: []string{"mcp__everything__echo"}, name: "mcp__everything__add"},
		"a list: a named session tool":         {allow: []string{"sessions_history"}, name: "sessions_history", sessionTool: true, want: true},
		"a list: an unnamed session tool":      {allow: []string{"sessions_history"}, name: "sessions_send", sessionTool: true},
		"a list never gives sessions_spawn":    {allow: []string{"sessions_spawn"}, name: "sessions_spawn", sessionTool: true},
		"the default never gives spawn either": {name: "sessions_spawn", sessionTool: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SubagentOffers(tc.allow, tc.name, tc.sessionTool); got != tc.want {
				t.Errorf("SubagentOffers(%v, %q, %v) = %v, want %v", tc.allow, tc.name, tc.sessionTool, got, tc.want)
			}
		})
	}
}

func TestSubagentSessionTools(t *testing.T) {
	all := []string{"sessions_list", "sessions_history", "sessions_send", "sessions_spawn"}
	cases := map[string]struct {
		allow, want []string
	}{
		"default: none":                          {},
		"a list: the session tools it names":     {allow: []string{"sessions_send", "mcp__x__y", "sessions_history"}, want: []string{"sessions_history", "sessions_send"}},
		"a list naming spawn: still not offered": {allow: []string{"sessions_spawn", "sessions_list"}, want: []string{"sessions_list"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SubagentSessionTools(tc.allow, all)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
