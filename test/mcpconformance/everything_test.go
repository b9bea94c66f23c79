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

package mcpconformance

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

func TestEverythingServer(t *testing.T) {
	if testing.Short() {
		t.Skip("installs the everything server from the npm registry and runs Node")
	}
	url, stop, err := testenv.StartEverything(t.Output())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	pool := mcptools.NewPool(mcptools.Options{})
	t.Cleanup(pool.Close)
	timeout := int32(20)
	agent := &sessionsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tooled", Generation: 1},
		Spec: sessionsv1alpha1.AgentSpec{Tools: sessionsv1alpha1.ToolsSpec{MCPServers: []sessionsv1alpha1.MCPServer{
			{Name: "everything", URL: url, TimeoutSeconds: &timeout, AllowedTools: []string{"echo", "get-sum", "get-structured-content"}},
		}}},
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	set := pool.Resolve(ctx, agent)
	var names []string
	for _, tl := range set.Tools() {
		names = append(names, tl.Name)
	}
	want := []string{"mcp__everything__echo", "mcp__everything__get-structured-content", "mcp__everything__get-sum"}
	if d := cmp.Diff(want, slices.Sorted(slices.Values(names))); d != "" {
		t.Fatalf("tools (-want +got):\n%s\nstatus %+v", d, set.Status())
	}
	if got := set.Call(ctx, "mcp__everything__echo", []byte(`{"message":"hi"}`)); got != (mcptools.Result{Text: "Echo: hi"}) {
		t.Errorf("echo: %+v", got)
	}
	if got := set.Call(ctx, "mcp__everything__get-sum", []byte(`{"a":2,"b":40}`)); got.IsError || got.Text == "" {
		t.Errorf("get-sum: %+v", got)
	}
	// The server validates its input: a wrong argument is an error result, not a failure.
	if got := set.Call(ctx, "mcp__everything__echo", []byte(`{"message":7}`)); !got.IsError {
		t.Errorf("echo with a number: %+v, want an error result", got)
	}
	// Structured content the server also sent as text reaches the model once.
	got := set.Call(ctx, "mcp__everything__get-structured-content", []byte(`{"location":"New York"}`))
	if got.IsError || strings.Count(got.Text, "temperature") != 1 {
		t.Errorf("get-structured-content: %+v, want its JSON once", got)
	}
}
