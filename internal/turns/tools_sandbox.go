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
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox/sandboxd"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// Sandboxes gives a sandboxed session's tool calls its sandbox (internal/sandbox.Sandboxes).
type Sandboxes interface {
	Acquire(ctx context.Context, agent *sessionsv1alpha1.Agent, session *sessionsv1alpha1.AgentSession) (*sandboxd.Client, error)
}

// sandboxToolNames are the tools a sandboxed session's sandbox gives it; no other session
// gets exec, write or edit: nothing an agent runs runs in the manager's Pod.
var sandboxToolNames = []string{"exec", "read", "write", "edit", "ls"}

// sandboxTools are the tools of a sandboxed session; each call acquires the session's
// sandbox (claiming it on the first, resuming it when suspended). Paths are checked by
// sandbox.WorkspacePath and again by sandboxd against its root, links included.
func sandboxTools(sbx Sandboxes) []*tool {
	acquire := func(ctx context.Context, c *toolCall) (*sandboxd.Client, error) {
		return sbx.Acquire(ctx, c.agent, c.session)
	}
	path := map[string]any{"type": "string", "description": "path relative to the workspace " + sandbox.Workspace + " (or absolute under it)"}
	return []*tool{
		{def: toolDef("exec", "Run a shell command in your sandbox (sh -c), in the workspace or cwd below it. stdout and stderr are cut at 32 KiB each.",
			map[string]any{
				"command":        map[string]any{"type": "string", "description": "the command line, run by sh -c"},
				"cwd":            path,
				"timeoutSeconds": map[string]any{"type": "number", "description": "seconds before the command is killed (default 60, at most 600)"},
			}, "command"),
			run: func(ctx context.Context, c *toolCall) (any, error) {
				var a struct {
					Command        string              `json:"command"`
					Cwd            string              `json:"cwd"`
					TimeoutSeconds sessiontools.Number `json:"timeoutSeconds"`
				}
				if err := sessiontools.DecodeArgs(c.args, &a); err != nil {
					return nil, err
				}
				if a.Command == "" || len(a.Command) > sandbox.MaxCommandBytes {
					return nil, fmt.Errorf("command must be 1 to %d bytes", sandbox.MaxCommandBytes)
				}
				cwd, err := sandbox.WorkspacePath(a.Cwd)
				if err != nil {
					return nil, err
				}
				sb, err := acquire(ctx, c)
				if err != nil {
					return nil, err
				}
				began := time.Now()
				res, err := sb.Exec(ctx, []string{"sh", "-c", a.Command}, cwd, sandbox.ExecTimeout(int32(a.TimeoutSeconds.Or(0))), sandbox.MaxOutputBytes)
				sandboxExecSeconds.Observe(time.Since(began).Seconds())
				if err != nil {
					return nil, err
				}
				return execResult{ExitCode: res.ExitCode, Stdout: text(res.Stdout), Stderr: text(res.Stderr),
					Truncated: res.Truncated, TimedOut: res.TimedOut}, nil
			}},
		{def: toolDef("read", "Read a text file of your sandbox's workspace (at most 128 KiB).", map[string]any{"path": path}, "path"),
			run: func(ctx context.Context, c *toolCall) (any, error) {
				rel, sb, err := pathAndSandbox(ctx, c, acquire)
				if err != nil {
					return nil, err
				}
				b, more, err := sb.Read(ctx, rel, sandbox.MaxReadBytes)
				if err != nil {
					return nil, err
				}
				return fileResult{Path: rel, Content: text(string(b)), Truncated: more}, nil
			}},
		{def: toolDef("write", "Write a file in your sandbox's workspace, replacing it; parents are made.",
			map[string]any{"path": path, "content": map[string]any{"type": "string", "description": "the whole new content"}}, "path", "content"),
			run: func(ctx context.Context, c *toolCall) (any, error) {
				var a struct {
					Content string `json:"content"`
				}
				if err := sessiontools.DecodeArgs(c.args, &a); err != nil {
					return nil, err
				}
				if len(a.Content) > sandbox.MaxWriteBytes {
					return nil, fmt.Errorf("content is larger than %d bytes", sandbox.MaxWriteBytes)
				}
				rel, sb, err := pathAndSandbox(ctx, c, acquire)
				if err != nil {
					return nil, err
				}
				if err := sb.Write(ctx, rel, []byte(a.Content)); err != nil {
					return nil, err
				}
				return map[string]any{"status": "ok", "path": rel, "bytes": len(a.Content)}, nil
			}},
		{def: toolDef("edit", "Replace one exact occurrence of oldText with newText in a file of your sandbox's workspace.",
			map[string]any{"path": path, "oldText": map[string]any{"type": "string"}, "newText": map[string]any{"type": "string"}}, "path", "oldText", "newText"),
			run: func(ctx context.Context, c *toolCall) (any, error) {
				var a struct {
					OldText string `json:"oldText"`
					NewText string `json:"newText"`
				}
				if err := sessiontools.DecodeArgs(c.args, &a); err != nil {
					return nil, err
				}
				rel, sb, err := pathAndSandbox(ctx, c, acquire)
				if err != nil {
					return nil, err
				}
				b, more, err := sb.Read(ctx, rel, sandbox.MaxWriteBytes)
				if err != nil {
					return nil, err
				}
				if more {
					return nil, fmt.Errorf("the file is larger than %d bytes", sandbox.MaxWriteBytes)
				}
				out, err := sandbox.Edit(string(b), a.OldText, a.NewText)
				if err != nil {
					return nil, err
				}
				if err := sb.Write(ctx, rel, []byte(out)); err != nil {
					return nil, err
				}
				return map[string]any{"status": "ok", "path": rel}, nil
			}},
		{def: toolDef("ls", "List a directory of your sandbox's workspace (at most 500 entries).", map[string]any{"path": path}),
			run: func(ctx context.Context, c *toolCall) (any, error) {
				rel, sb, err := pathAndSandbox(ctx, c, acquire)
				if err != nil {
					return nil, err
				}
				entries, more, err := sb.List(ctx, rel, sandbox.MaxListEntries)
				if err != nil {
					return nil, err
				}
				return listResult{Path: rel, Entries: entries, Truncated: more}, nil
			}},
	}
}

// pathAndSandbox decodes and checks the call's path, then acquires the sandbox.
func pathAndSandbox(ctx context.Context, c *toolCall, acquire func(context.Context, *toolCall) (*sandboxd.Client, error)) (string, *sandboxd.Client, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := sessiontools.DecodeArgs(c.args, &a); err != nil {
		return "", nil, err
	}
	rel, err := sandbox.WorkspacePath(a.Path)
	if err != nil {
		return "", nil, err
	}
	sb, err := acquire(ctx, c)
	return rel, sb, err
}

// text makes sandbox output valid UTF-8 for the model (binary bytes become U+FFFD), still
// within the output bound.
func text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return textutil.Truncate(strings.ToValidUTF8(s, "\uFFFD"), max(len(s), sandbox.MaxOutputBytes))
}

type execResult struct {
	ExitCode  int32  `json:"exitCode"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated,omitempty"`
	TimedOut  bool   `json:"timedOut,omitempty"`
}

type fileResult struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated,omitempty"`
}

type listResult struct {
	Path      string           `json:"path"`
	Entries   []sandboxd.Entry `json:"entries"`
	Truncated bool             `json:"truncated,omitempty"`
}
