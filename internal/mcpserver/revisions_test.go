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

package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
)

// TestRevisions connects the Go SDK's client asking for each revision /mcp serves: the
// answer names the revision asked for, and a tool call runs as the caller.
func TestRevisions(t *testing.T) {
	for _, rev := range mcpserver.Revisions {
		t.Run(rev, func(t *testing.T) {
			srv, _ := endpoint(t)
			cs, err := connectRevision(t, srv.URL+"/mcp?namespace="+ns, "alice", rev)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cs.Close() }()
			if got := cs.InitializeResult().ProtocolVersion; got != rev {
				t.Fatalf("negotiated %s, want %s", got, rev)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sessions_send",
				Arguments: map[string]any{"sessionKey": "main", "message": "hello", "timeoutSeconds": 0}})
			if err != nil {
				t.Fatal(err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || !strings.Contains(text, `"status":"accepted"`) {
				t.Fatalf("sessions_send = %s (error %v), want accepted", text, res.IsError)
			}
		})
	}
}
