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
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// A sandboxed sub-agent session's workspace_list and workspace_read read its sandbox (a
// real sandboxd): nested listing within the depth, reads in parts, and the same refusals of
// paths and links that lead out as the sandbox tools.
func TestSandboxWorkspaceTools(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	for name, content := range map[string]string{
		"inputs/data/a.txt": "hello sandbox", "inputs/data/deep/b.txt": "b", outside: "secret",
	} {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "inputs", "link")); err != nil {
		t.Fatal(err)
	}
	sbx := &localSandbox{c: testenv.StartSandboxd(t, root)}
	tools := map[string]*tool{}
	for _, tl := range sandboxWorkspaceTools(sbx) {
		tools[tl.def.Name] = tl
	}
	c := &turn{agent: &sessionsv1alpha1.Agent{}, session: &sessionsv1alpha1.AgentSession{}}
	call := func(name string, args map[string]any) (string, bool) {
		b, _ := json.Marshal(args)
		return runTool(context.Background(), tools[name], c, &provider.ToolCall{Name: name, Arguments: b})
	}
	cases := map[string]struct {
		tool    string
		args    map[string]any
		want    []string // substrings of the result
		absent  []string
		wantErr bool
	}{
		"list all": {tool: "workspace_list", args: map[string]any{},
			want:   []string{`"path":"inputs/data/a.txt","type":"file","bytes":13`, `"path":"inputs/data/deep/b.txt"`, `"path":"inputs/data","type":"dir"`},
			absent: []string{"link"}},
		"list one level": {tool: "workspace_list", args: map[string]any{"path": "inputs", "depth": 1},
			want: []string{`"path":"inputs/data","type":"dir"`}, absent: []string{"a.txt"}},
		"read":            {tool: "workspace_read", args: map[string]any{"path": "inputs/data/a.txt"}, want: []string{`"content":"hello sandbox"`, `"bytes":13`}},
		"read a part":     {tool: "workspace_read", args: map[string]any{"path": "/workspace/inputs/data/a.txt", "offset": 6, "maxBytes": 3}, want: []string{`"content":"san"`, `"nextOffset":9`}},
		"read past 4 MiB": {tool: "workspace_read", args: map[string]any{"path": "inputs/data/a.txt", "offset": 5 << 20}, want: []string{"use exec"}, wantErr: true},
		"read a dir":      {tool: "workspace_read", args: map[string]any{"path": "inputs/data"}, want: []string{"not a regular file"}, wantErr: true},
		"read missing":    {tool: "workspace_read", args: map[string]any{"path": "inputs/none"}, want: []string{"no such file"}, wantErr: true},
		"read dot-dot":    {tool: "workspace_read", args: map[string]any{"path": "../etc/passwd"}, want: []string{"outside the workspace"}, wantErr: true},
		"list absolute":   {tool: "workspace_list", args: map[string]any{"path": "/etc"}, want: []string{"outside the workspace"}, wantErr: true},
		"read a link out": {tool: "workspace_read", args: map[string]any{"path": "inputs/link"}, absent: []string{"secret"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, isErr := call(tc.tool, tc.args)
			if isErr != tc.wantErr {
				t.Errorf("%s = %.300q, error %v, want error %v", tc.tool, got, isErr, tc.wantErr)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s = %.400q, want %q in it", tc.tool, got, w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(got, a) {
					t.Errorf("%s = %.400q, want no %q", tc.tool, got, a)
				}
			}
		})
	}
}

// A sandboxed sub-agent session reads its sandbox with workspace_list/workspace_read; an
// unsandboxed one its folder on the store's volume.
func TestSandboxWorkspaceToolsOffered(t *testing.T) {
	sandboxed := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "coder"}}
	sandboxed.Spec.Sandbox.Enabled = true
	plain := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "chat"}}
	child := &sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:coder:subagent:1", SpawnedBy: "agent:x:main"}}
	child.Status.SessionID = "sid"
	cases := map[string]struct {
		agent       *sessionsv1alpha1.Agent
		wantSandbox bool
	}{
		"sandboxed child":   {agent: sandboxed, wantSandbox: true},
		"unsandboxed child": {agent: plain},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ts := sessionTools()
			ts.src.WorkspaceRoot = t.TempDir()
			ts.src.Sandboxes = &localSandbox{}
			ts.sandbox = sandboxTools(ts.src.Sandboxes)
			ts.sandboxWorkspace = sandboxWorkspaceTools(ts.src.Sandboxes)
			_, offered := ts.forTurn(context.Background(), tc.agent, child)
			for _, n := range []string{"workspace_list", "workspace_read"} {
				tl, ok := offered[n]
				if !ok {
					t.Fatalf("%s not offered", n)
				}
				if isSandbox := tl == ts.sandboxWorkspace[0] || tl == ts.sandboxWorkspace[1]; isSandbox != tc.wantSandbox {
					t.Errorf("%s reads the sandbox = %v, want %v", n, isSandbox, tc.wantSandbox)
				}
			}
		})
	}
}
