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
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// NamePrefix starts the name of every MCP tool the model sees.
const NamePrefix = "mcp__"

// MaxToolNameLen is the longest tool name every provider accepts (OpenAI function names are
// ^[a-zA-Z0-9_-]{1,64}$; Anthropic allows more).
const MaxToolNameLen = 64

// ToolName is the name the model sees for a server's tool: mcp__<server>__<tool>. A tool
// name that providers would refuse (characters outside [A-Za-z0-9_-], or too long) is
// rewritten to one they accept, with a hash of the original appended so two tools of one
// server never share a name.
func ToolName(server, tool string) string {
	name := NamePrefix + server + "__" + tool
	if len(name) <= MaxToolNameLen && validName(name) {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		if nameChar(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	clean := b.String()
	if keep := MaxToolNameLen - len(suffix); len(clean) > keep {
		clean = clean[:keep]
	}
	return clean + suffix
}

// IsToolName says whether name is in the MCP tool namespace; no built-in tool uses it.
func IsToolName(name string) bool { return strings.HasPrefix(name, NamePrefix) }

func validName(s string) bool {
	for _, r := range s {
		if !nameChar(r) {
			return false
		}
	}
	return s != ""
}

func nameChar(r rune) bool {
	return r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}
