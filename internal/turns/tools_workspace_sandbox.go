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
	"encoding/base64"
	"errors"
	"fmt"
	"path"

	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox/sandboxd"
)

// maxSandboxReadEnd bounds how far into a file workspace_read reads a sandbox's file:
// sandboxd reads from the start, so a later part costs the bytes before it.
const maxSandboxReadEnd = 4 << 20

// sandboxWorkspaceTools are workspace_list and workspace_read of a sandboxed sub-agent
// session: the same tools, with the same arguments and bounds, over its sandbox's
// workspace, where its attachments land (controllers/subagentrun).
func sandboxWorkspaceTools(sbx Sandboxes) []*tool {
	list := func(ctx context.Context, c *toolCall, p string, depth int) (any, error) {
		start, err := sandbox.WorkspacePath(p)
		if err != nil {
			return nil, err
		}
		sb, err := sbx.Acquire(ctx, c.agent, c.session)
		if err != nil {
			return nil, err
		}
		return listSandbox(ctx, sb, start, depth)
	}
	read := func(ctx context.Context, c *toolCall, p string, offset, n int64) (any, error) {
		name, err := sandbox.WorkspacePath(p)
		if err != nil {
			return nil, err
		}
		if name == "." {
			return nil, errors.New("path is required")
		}
		sb, err := sbx.Acquire(ctx, c.agent, c.session)
		if err != nil {
			return nil, err
		}
		return readSandbox(ctx, sb, name, offset, n)
	}
	return []*tool{workspaceListTool(list), workspaceReadTool(read)}
}

// listSandbox lists start in the sandbox down to depth levels, breadth first, at most
// maxWorkspaceEntries entries (sandboxd leaves out links that lead out of the workspace).
func listSandbox(ctx context.Context, sb *sandboxd.Client, start string, depth int) (*workspaceListing, error) {
	out := &workspaceListing{Entries: []workspaceEntry{}}
	type dir struct {
		name  string
		level int
	}
	queue := []dir{{start, 0}}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		entries, more, err := sb.List(ctx, d.name, maxWorkspaceEntries-len(out.Entries))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := path.Join(d.name, e.Name)
			row := workspaceEntry{Path: name, Type: "file", Bytes: e.Size}
			if e.Type == "directory" {
				row.Type, row.Bytes = "dir", 0
				if d.level+1 < depth {
					queue = append(queue, dir{name, d.level + 1})
				}
			}
			out.Entries = append(out.Entries, row)
		}
		if more || (len(out.Entries) >= maxWorkspaceEntries && len(queue) > 0) {
			out.Truncated = true
			break
		}
	}
	return out, nil
}

// readSandbox reads at most n bytes of the file name in the sandbox from offset.
func readSandbox(ctx context.Context, sb *sandboxd.Client, name string, offset, n int64) (*workspaceFile, error) {
	if offset+n > maxSandboxReadEnd {
		return nil, fmt.Errorf("workspace_read reads a sandbox's file up to byte %d; use exec (tail -c, dd) past it", maxSandboxReadEnd)
	}
	size, err := sandboxFileSize(ctx, sb, name)
	if err != nil {
		return nil, err
	}
	b, _, err := sb.Read(ctx, name, int(offset+n))
	if err != nil {
		return nil, err
	}
	buf := b[min(offset, int64(len(b))):]
	res := &workspaceFile{Path: name, Bytes: size, Offset: offset, Encoding: "utf8"}
	if text, ok := utf8Prefix(buf, offset+int64(len(buf)) < size); ok {
		buf = buf[:len(text)]
		res.Content = text
	} else {
		res.Content, res.Encoding = base64.StdEncoding.EncodeToString(buf), "base64"
	}
	if end := offset + int64(len(buf)); end < size {
		res.NextOffset = end
	}
	return res, nil
}

// sandboxFileSize is the size of the regular file name, from its directory's listing.
func sandboxFileSize(ctx context.Context, sb *sandboxd.Client, name string) (int64, error) {
	entries, _, err := sb.List(ctx, path.Dir(name), maxSandboxListing)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if e.Name == path.Base(name) {
			if e.Type != "file" {
				return 0, fmt.Errorf("%s is not a regular file", name)
			}
			return e.Size, nil
		}
	}
	return 0, fmt.Errorf("%s: no such file or directory in the workspace", name)
}

// maxSandboxListing bounds the directory listing read to find a file's size.
const maxSandboxListing = 10000
