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

package turns

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools/mcptest"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
)

const (
	keySub = "agent:tooled:subagent:33333333-3333-4333-8333-333333333333"
	sidSub = "44444444-4444-4444-8444-444444444444"
	keyT   = "agent:tooled:main"
	sidT   = "55555555-5555-4555-8555-555555555555"
)

// toolRecorder wraps providers to record the tool names each model call was offered.
type toolRecorder struct {
	mu      sync.Mutex
	offered [][]string
}

func (r *toolRecorder) option(o *Options) {
	inner := o.NewProvider
	o.NewProvider = func(cfg provider.Config) (provider.Provider, error) {
		p, err := inner(cfg)
		return recordingProvider{p, r}, err
	}
}

func (r *toolRecorder) last() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.offered[len(r.offered)-1]
}

type recordingProvider struct {
	provider.Provider
	r *toolRecorder
}

func (p recordingProvider) Complete(ctx context.Context, req provider.Request) (*provider.Response, error) {
	names := make([]string, 0, len(req.Tools))
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	p.r.mu.Lock()
	p.r.offered = append(p.r.offered, names)
	p.r.mu.Unlock()
	return p.Provider.Complete(ctx, req)
}

// mcpFixture is an agent "tooled" with the MCP server "everything", a main session and a
// sub-agent session, on an engine with an MCP pool and a workspace root.
func mcpFixture(t *testing.T, subagentTools ...string) (*fixture, *toolRecorder) {
	srv := mcptest.New(false)
	t.Cleanup(srv.Close)
	timeout := int32(2)
	agent := scriptedAgent("tooled",
		toolRule("^echo", "mcp__everything__echo", map[string]any{"text": "hi"}),
		toolRule("^slow", "mcp__everything__slow", map[string]any{}),
		toolRule("^spawn", "sessions_spawn", map[string]any{"task": "x"}),
		toolRule("^read", "workspace_read", map[string]any{"path": ".agents/attachments/u1/notes.txt"}),
	)
	agent.Spec.Tools.MCPServers = []sessionsv1alpha1.MCPServer{{Name: "everything", URL: srv.URL, TimeoutSeconds: &timeout,
		AllowedTools: []string{"echo", "add", "slow"}}}
	agent.Spec.Subagents.Tools = subagentTools
	sub := session(keySub, "tooled", sidSub)
	sub.Spec.SpawnedBy = keyT
	rec := &toolRecorder{}
	pool := mcptools.NewPool(mcptools.Options{})
	t.Cleanup(pool.Close)
	root := t.TempDir()
	tools := func(o *Options) { o.Tools = ToolSources{MCP: pool, WorkspaceRoot: root} }
	f := newFixture(t, []client.Object{agent, session(keyT, "tooled", sidT), sub}, rec.option, tools)
	att := filepath.Join(WorkspaceDir(root, ns, sidSub), ".agents", "attachments", "u1")
	if err := os.MkdirAll(att, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(att, "notes.txt"), []byte("Llamas hum."), 0o640); err != nil {
		t.Fatal(err)
	}
	return f, rec
}

func TestMCPToolCallInATurn(t *testing.T) {
	f, _ := mcpFixture(t)
	f.submit(turnReq("m1", keyT, "echo please"))
	res := f.await("m1")
	if res.Err != nil || res.Text != `tools: Echo: hi` {
		t.Fatalf("turn: text %q err %v", res.Text, res.Err)
	}
	want := []rec{
		{Key: "m1/0", Role: "user", Text: "echo please"},
		{Key: "m1/1", Role: "assistant"},
		{Key: "m1/2", Role: "toolResult", Text: "Echo: hi"},
		{Key: "m1/3", Role: "assistant", Text: "tools: Echo: hi"},
	}
	if d := cmp.Diff(want, f.records(sidT)); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
}

func TestSlowMCPServerEndsTheCallNotTheTurn(t *testing.T) {
	f, _ := mcpFixture(t)
	f.submit(turnReq("s1", keyT, "slow please"))
	res := f.await("s1")
	if res.Err != nil {
		t.Fatalf("turn failed: %v", res.Err)
	}
	recs := f.records(sidT)
	if got := recs[2]; got.Role != "toolResult" || got.Text != `MCP server "everything" did not answer slow within 2s` {
		t.Errorf("tool result %+v, want the timeout error", got)
	}
}

func TestToolsOffered(t *testing.T) {
	session := []string{"sessions_list", "sessions_history", "sessions_search", "sessions_send", "sessions_spawn", "agents_list", "session_status", "sessions", "sessions_yield"}
	mcp := []string{"mcp__everything__add", "mcp__everything__echo", "mcp__everything__slow"}
	workspace := []string{"workspace_list", "workspace_read"}
	cases := map[string]struct {
		key           string
		subagentTools []string
		want          []string
	}{
		"main session: session and MCP tools": {key: keyT, want: slices.Concat(session, mcp)},
		"sub-agent: every non-session tool":   {key: keySub, want: slices.Concat(mcp, workspace)},
		"sub-agent narrowed by subagents.tools": {key: keySub, subagentTools: []string{"mcp__everything__echo"},
			want: slices.Concat([]string{"mcp__everything__echo"}, workspace)},
		"sub-agent given session tools by subagents.tools, never sessions_spawn": {key: keySub,
			subagentTools: []string{"mcp__everything__echo", "sessions_history", "sessions_send", "sessions_spawn"},
			want:          slices.Concat([]string{"sessions_history", "sessions_send", "mcp__everything__echo"}, workspace)},
		"subagents.tools does not narrow the main session": {key: keyT, subagentTools: []string{"mcp__everything__echo"}, want: slices.Concat(session, mcp)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f, rec := mcpFixture(t, c.subagentTools...)
			f.submit(turnReq("o1", c.key, "hello"))
			if res := f.await("o1"); res.Err != nil {
				t.Fatal(res.Err)
			}
			if d := cmp.Diff(c.want, rec.last()); d != "" {
				t.Errorf("tools offered (-want +got):\n%s", d)
			}
		})
	}
}

func TestSubagentCannotCallSessionTools(t *testing.T) {
	f, _ := mcpFixture(t)
	f.submit(turnReq("x1", keySub, "spawn something"))
	if res := f.await("x1"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := f.records(sidSub)[2]; got.Role != "toolResult" || got.Text != `{"status":"error","error":"unknown tool \"sessions_spawn\""}` {
		t.Errorf("sub-agent's sessions_spawn: %+v, want an unknown tool error", got)
	}
}

func TestSubagentReadsItsAttachment(t *testing.T) {
	f, _ := mcpFixture(t)
	f.submit(turnReq("r1", keySub, "read my notes"))
	if res := f.await("r1"); res.Err != nil {
		t.Fatal(res.Err)
	}
	want := `{"path":".agents/attachments/u1/notes.txt","bytes":11,"offset":0,"content":"Llamas hum.","encoding":"utf8"}`
	if got := f.records(sidSub)[2]; got.Role != "toolResult" || got.Text != want {
		t.Errorf("workspace_read result %+v, want %s", got, want)
	}
	// The main session has no workspace tools.
	f.submit(turnReq("r2", keyT, "read my notes"))
	if res := f.await("r2"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := f.records(sidT)[2]; got.Text != `{"status":"error","error":"unknown tool \"workspace_read\""}` {
		t.Errorf("main session's workspace_read: %+v", got)
	}
}
