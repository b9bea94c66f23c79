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

package mcptools

import (
	"strings"
	"testing"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	cases := map[string]struct {
		server, tool string
		want         string
	}{
		"plain":            {"everything", "echo", "mcp__everything__echo"},
		"dash kept":        {"everything", "get-sum", "mcp__everything__get-sum"},
		"dot and slash":    {"fs", "files.read/v2", "mcp__fs__files_read_v2_" + hash8("fs", "files.read/v2")},
		"unicode":          {"fs", "lire_fichier_é", "mcp__fs__lire_fichier___" + hash8("fs", "lire_fichier_é")},
		"too long":         {"s", long, ("mcp__s__" + long)[:55] + "_" + hash8("s", long)},
		"exactly 64 bytes": {"s", strings.Repeat("y", 56), "mcp__s__" + strings.Repeat("y", 56)},
	}
	for name, c := range cases {
		got := ToolName(c.server, c.tool)
		if got != c.want {
			t.Errorf("%s: ToolName(%q, %q) = %q, want %q", name, c.server, c.tool, got, c.want)
		}
		if len(got) > MaxToolNameLen || !validName(got) || !IsToolName(got) {
			t.Errorf("%s: %q is not a name every provider accepts", name, got)
		}
	}
	// Names that clean up to the same text stay apart.
	if a, b := ToolName("s", "a.b"), ToolName("s", "a/b"); a == b {
		t.Errorf("a.b and a/b share the name %q", a)
	}
}

func hash8(server, tool string) string {
	n := ToolName(server, tool)
	return n[len(n)-8:]
}
