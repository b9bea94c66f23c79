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
	"encoding/json"
	"strings"
	"testing"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// An MCP server's answer is read up to the pool's read limit before the SDK decodes it: a
// tool result over it fails the call with an error naming the limit, over either transport,
// and a result under it comes back as before.
func TestToolResultReadUpToTheLimit(t *testing.T) {
	for name, sse := range map[string]bool{"streamable HTTP": false, "HTTP+SSE fallback": true} {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, sse)
			p := newTestPool(t, Options{ReadLimit: 1 << 20})
			set := p.Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "everything", URL: ts.URL}))
			args := func(n int) []byte {
				b, _ := json.Marshal(map[string]string{"text": strings.Repeat("z", n)})
				return b
			}
			if got := set.Call(t.Context(), "mcp__everything__echo", args(100<<10)); got.IsError {
				t.Fatalf("a 100 KiB result = error %.200s", got.Text)
			}
			got := set.Call(t.Context(), "mcp__everything__echo", args(2<<20))
			if !got.IsError || !strings.Contains(got.Text, "read limit of 1 MiB (--mcp-read-limit)") {
				t.Errorf("a 2 MiB result = %.300s, want an error naming the read limit", got.Text)
			}
		})
	}
}
