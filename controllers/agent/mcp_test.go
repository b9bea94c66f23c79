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

package agent

import (
	"testing"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestMCPSummary(t *testing.T) {
	cases := map[string]struct {
		in        []sessionsv1alpha1.MCPServerStatus
		want      string
		wantRetry bool
	}{
		"all answered": {[]sessionsv1alpha1.MCPServerStatus{{Name: "everything", Connected: true, Tools: 13}, {Name: "fs", Connected: true}},
			"MCP servers: everything 13 tools, fs 0 tools", false},
		"one down": {[]sessionsv1alpha1.MCPServerStatus{{Name: "everything", Connected: true, Tools: 2}, {Name: "search", Message: "connection refused"}},
			"MCP servers: everything 2 tools, search not connected", true},
	}
	for name, c := range cases {
		got, retry := mcpSummary(c.in)
		if got != c.want || retry != c.wantRetry {
			t.Errorf("%s: mcpSummary = %q, %v; want %q, %v", name, got, retry, c.want, c.wantRetry)
		}
	}
}
