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

package search

import (
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// maxBodyBytes bounds the text indexed of one message: a pasted log of megabytes is found by
// its start.
const maxBodyBytes = 64 << 10

// Text is what the index holds of a message: the text blocks of what people, models and tools
// said. System context (the operator's) and thinking are not searched.
func Text(m *transcript.Message) string {
	switch m.Role {
	case transcript.RoleUser, transcript.RoleAssistant, transcript.RoleToolResult:
	default:
		return ""
	}
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type != transcript.BlockText || c.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
		if b.Len() >= maxBodyBytes {
			break
		}
	}
	if b.Len() > maxBodyBytes {
		return textutil.Prefix(b.String(), maxBodyBytes)
	}
	return b.String()
}
