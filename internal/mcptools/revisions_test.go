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
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools/mcptest"
)

// TestRevisions resolves and calls a Go SDK server of each revision: the client speaks
// 2026-07-28 to a server that serves it (stateless streamable HTTP) and 2025-11-25 to one
// that does not (stateful), as every request after the handshake says.
func TestRevisions(t *testing.T) {
	for _, c := range []struct {
		name string
		srv  func() *mcptest.Server
		want string
	}{
		{"2026-07-28", mcptest.NewStateless, "2026-07-28"},
		{"2025-11-25", func() *mcptest.Server { return mcptest.New(false) }, "2025-11-25"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := c.srv()
			t.Cleanup(ts.Close)
			p := newTestPool(t, Options{})
			set := p.Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "everything", URL: ts.URL}))
			if d := cmp.Diff([]sessionsv1alpha1.MCPServerStatus{{Name: "everything", Connected: true, Tools: 5}}, set.Status()); d != "" {
				t.Fatalf("status (-want +got):\n%s", d)
			}
			if got := set.Call(t.Context(), "mcp__everything__echo", []byte(`{"text":"hi"}`)); got != (Result{Text: "Echo: hi"}) {
				t.Fatalf("echo = %+v", got)
			}
			if got := ts.LastHeader("Mcp-Protocol-Version"); got != c.want {
				t.Errorf("the tool call spoke %q, want %q", got, c.want)
			}
		})
	}
}
