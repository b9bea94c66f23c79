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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools/mcptest"
)

// newTestServer starts an in-process MCP server stopped at the end of the test.
func newTestServer(t *testing.T, sse bool) *mcptest.Server {
	t.Helper()
	s := mcptest.New(sse)
	t.Cleanup(s.Close)
	return s
}

// testAgent is an Agent with the given MCP servers.
func testAgent(gen int64, servers ...sessionsv1alpha1.MCPServer) *sessionsv1alpha1.Agent {
	return &sessionsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "uid-a", Generation: gen},
		Spec:       sessionsv1alpha1.AgentSpec{Tools: sessionsv1alpha1.ToolsSpec{MCPServers: servers}},
	}
}

func seconds(n int32) *int32 { return &n }

// newTestPool returns a pool closed at the end of the test.
func newTestPool(t *testing.T, o Options) *Pool {
	p := NewPool(o)
	t.Cleanup(p.Close)
	return p
}

// toolNames are the model-facing names of a set's tools.
func toolNames(s *Set) []string {
	var out []string
	for _, t := range s.Tools() {
		out = append(out, t.Name)
	}
	return out
}
