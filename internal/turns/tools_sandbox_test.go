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
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox/sandboxd"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// localSandbox is a session's sandbox that is a real sandboxd on this machine.
type localSandbox struct {
	c        *sandboxd.Client
	acquired int
}

func (l *localSandbox) Acquire(context.Context, *sessionsv1alpha1.Agent, *sessionsv1alpha1.AgentSession) (*sandboxd.Client, error) {
	l.acquired++
	return l.c, nil
}

// Only a sandboxed session is offered the sandbox tools, and only when sandboxes are on.
func TestSandboxToolsOffered(t *testing.T) {
	sandboxed := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "coder"}}
	sandboxed.Spec.Sandbox.Enabled = true
	plain := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "chat"}}
	session := &sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:x:main"}}
	cases := map[string]struct {
		agent *sessionsv1alpha1.Agent
		on    bool
		want  bool
	}{
		"sandboxed agent":            {agent: sandboxed, on: true, want: true},
		"unsandboxed agent":          {agent: plain, on: true},
		"sandboxed, sandboxes off":   {agent: sandboxed},
		"unsandboxed, sandboxes off": {agent: plain},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ts := sessionTools()
			if tc.on {
				ts.src.Sandboxes = &localSandbox{}
				ts.sandbox = sandboxTools(ts.src.Sandboxes)
			}
			_, offered := ts.forTurn(context.Background(), tc.agent, session)
			for _, n := range sandboxToolNames {
				if _, ok := offered[n]; ok != tc.want {
					t.Errorf("tool %s offered = %v, want %v", n, ok, tc.want)
				}
			}
		})
	}
}

// The sandbox tools against a real sandboxd: what they do, what they refuse, and the bounds
// of what they return.
func TestSandboxTools(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	sbx := &localSandbox{c: testenv.StartSandboxd(t, root)}
	tools := map[string]*tool{}
	for _, tl := range sandboxTools(sbx) {
		tools[tl.def.Name] = tl
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for n := range tools {
			if !yield(n) {
				return
			}
		}
	}); !slices.Equal(got, slices.Sorted(slices.Values(sandboxToolNames))) {
		t.Fatalf("tools = %v", got)
	}
	c := &turn{agent: &sessionsv1alpha1.Agent{}, session: &sessionsv1alpha1.AgentSession{}}
	call := func(name string, args map[string]any) (string, bool) {
		b, _ := json.Marshal(args)
		return runTool(context.Background(), tools[name], c, &provider.ToolCall{Name: name, Arguments: b})
	}
	steps := []struct {
		tool    string
		args    map[string]any
		want    string // a substring of the result
		wantErr bool
	}{
		{tool: "write", args: map[string]any{"path": "src/a.txt", "content": "one two\n"}, want: `"bytes":8`},
		{tool: "read", args: map[string]any{"path": "/workspace/src/a.txt"}, want: `"content":"one two\n"`},
		{tool: "edit", args: map[string]any{"path": "src/a.txt", "oldText": "two", "newText": "three"}, want: `"status":"ok"`},
		{tool: "exec", args: map[string]any{"command": "cat a.txt; echo err >&2; exit 4", "cwd": "src"}, want: `{"exitCode":4,"stdout":"one three\n","stderr":"err\n"}`},
		{tool: "ls", args: map[string]any{"path": "src"}, want: `"name":"a.txt"`},
		{tool: "edit", args: map[string]any{"path": "src/a.txt", "oldText": "absent", "newText": "x"}, want: "not found", wantErr: true},
		{tool: "read", args: map[string]any{"path": "../etc/passwd"}, want: "outside the workspace", wantErr: true},
		{tool: "write", args: map[string]any{"path": "/etc/x", "content": "x"}, want: "outside the workspace", wantErr: true},
		{tool: "exec", args: map[string]any{"command": "pwd", "cwd": "../.."}, want: "outside the workspace", wantErr: true},
		{tool: "exec", args: map[string]any{"command": "ln -s " + outside + " link && ln -s / rootlink"}, want: `"exitCode":0`},
		{tool: "read", args: map[string]any{"path": "link"}, want: "PERMISSION_DENIED", wantErr: true},
		{tool: "write", args: map[string]any{"path": "link", "content": "overwritten"}, want: "PERMISSION_DENIED", wantErr: true},
		{tool: "ls", args: map[string]any{"path": "rootlink"}, want: "PERMISSION_DENIED", wantErr: true},
		{tool: "edit", args: map[string]any{"path": "link", "oldText": "secret", "newText": "x"}, want: "PERMISSION_DENIED", wantErr: true},
		{tool: "ls", args: map[string]any{"path": "link"}, want: "PERMISSION_DENIED", wantErr: true},
		{tool: "exec", args: map[string]any{"command": "cat etc/hostname", "cwd": "rootlink"}, want: "escapes sandbox root", wantErr: true},
		{tool: "ls", args: map[string]any{"path": "src/../src"}, want: `"path":"src"`},
		{tool: "read", args: map[string]any{"path": "/workspace/../etc/passwd"}, want: "outside the workspace", wantErr: true},
		{tool: "exec", args: map[string]any{"command": "head -c 200000 /dev/zero | tr '\\0' b > big.txt"}, want: `"exitCode":0`},
		{tool: "read", args: map[string]any{"path": "big.txt"}, want: `"truncated":true`},
		{tool: "exec", args: map[string]any{"command": "sleep 30", "timeoutSeconds": 1}, want: `"timedOut":true`},
		{tool: "exec", args: map[string]any{"command": strings.Repeat("x", sandbox.MaxCommandBytes+1)}, want: "command must be", wantErr: true},
		{tool: "exec", args: map[string]any{"command": "head -c 100000 /dev/zero | tr '\\0' a"}, want: `"truncated":true`},
		{tool: "exec", args: map[string]any{"command": "printf '\\377\\376ok'"}, want: "\"stdout\":\"\ufffdok\""},
		{tool: "exec", args: map[string]any{"command": ""}, want: "command must be", wantErr: true},
		{tool: "write", args: map[string]any{"path": "big", "content": strings.Repeat("x", sandbox.MaxWriteBytes+1)}, want: "larger than", wantErr: true},
	}
	for i, s := range steps {
		got, isErr := call(s.tool, s.args)
		if isErr != s.wantErr || !strings.Contains(got, s.want) {
			t.Errorf("step %d %s(%v) = %.300q (error %v), want %q (error %v)", i, s.tool, s.args["path"], got, isErr, s.want, s.wantErr)
		}
		if s.want == `"truncated":true` && s.tool == "read" {
			var r fileResult
			if err := json.Unmarshal([]byte(got), &r); err != nil || len(r.Content) != sandbox.MaxReadBytes {
				t.Errorf("truncated read %d bytes, want %d (%v)", len(r.Content), sandbox.MaxReadBytes, err)
			}
		}
		if s.want == `"truncated":true` && s.tool == "exec" {
			var r execResult
			if err := json.Unmarshal([]byte(got), &r); err != nil || len(r.Stdout) != sandbox.MaxOutputBytes {
				t.Errorf("truncated exec stdout %d bytes, want %d (%v)", len(r.Stdout), sandbox.MaxOutputBytes, err)
			}
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "secret" {
		t.Errorf("the file outside the workspace was changed: %q", b)
	}
}
