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
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// Bounds of the workspace tools: a listing or a read never floods the model's context.
const (
	maxWorkspaceEntries   = 500
	defaultWorkspaceDepth = 4
	maxWorkspaceDepth     = 8
	defaultWorkspaceRead  = 16 << 10
	maxWorkspaceRead      = 64 << 10
	maxWorkspacePath      = 1024
	// maxPathInError bounds the path an error to the model repeats.
	maxPathInError = 80
)

// workspaceLister lists path down to depth levels of a session's workspace; workspaceReader
// reads n bytes of a file from offset. The folder on the store's volume is one workspace, a
// sandbox another (tools_workspace_sandbox.go).
type (
	workspaceLister func(ctx context.Context, c *toolCall, path string, depth int) (any, error)
	workspaceReader func(ctx context.Context, c *toolCall, path string, offset, n int64) (any, error)
)

// folderWorkspace lists and reads the folder dir.
func folderWorkspace(dir string) (workspaceLister, workspaceReader) {
	return func(_ context.Context, _ *toolCall, p string, depth int) (any, error) {
			return listWorkspace(dir, p, depth)
		},
		func(_ context.Context, _ *toolCall, p string, offset, n int64) (any, error) {
			return readWorkspace(dir, p, offset, n)
		}
}

func workspaceListTool(list workspaceLister) *tool {
	return &tool{def: toolDef("workspace_list",
		"List the files of your workspace (your attachments are under .agents/attachments/), recursively.",
		map[string]any{
			"path":  map[string]any{"type": "string", "description": "directory relative to the workspace (default .)"},
			"depth": map[string]any{"type": "number", "description": "how many levels down (default 4, at most 8)"},
		}),
		run: func(ctx context.Context, c *toolCall) (any, error) {
			var a struct {
				Path  string              `json:"path"`
				Depth sessiontools.Number `json:"depth"`
			}
			if err := sessiontools.DecodeArgs(c.args, &a); err != nil {
				return nil, err
			}
			return list(ctx, c, a.Path, int(sessiontools.Clamp(a.Depth.Or(defaultWorkspaceDepth), 1, maxWorkspaceDepth)))
		}}
}

func workspaceReadTool(read workspaceReader) *tool {
	return &tool{def: toolDef("workspace_read",
		"Read a file of your workspace; long files are read in parts with offset.",
		map[string]any{
			"path":     map[string]any{"type": "string", "description": "file relative to the workspace"},
			"offset":   map[string]any{"type": "number", "description": "byte offset to start at (default 0)"},
			"maxBytes": map[string]any{"type": "number", "description": "bytes to read (default 16384, at most 65536)"},
		}, "path"),
		run: func(ctx context.Context, c *toolCall) (any, error) {
			var a struct {
				Path     string              `json:"path"`
				Offset   sessiontools.Number `json:"offset"`
				MaxBytes sessiontools.Number `json:"maxBytes"`
			}
			if err := sessiontools.DecodeArgs(c.args, &a); err != nil {
				return nil, err
			}
			return read(ctx, c, a.Path, max(a.Offset.Or(0), 0), sessiontools.Clamp(a.MaxBytes.Or(defaultWorkspaceRead), 1, maxWorkspaceRead))
		}}
}

// workspaceEntry is one row of workspace_list.
type workspaceEntry struct {
	Path  string `json:"path"`
	Type  string `json:"type"` // file, dir, symlink or other
	Bytes int64  `json:"bytes,omitempty"`
}

type workspaceListing struct {
	Entries   []workspaceEntry `json:"entries"`
	Truncated bool             `json:"truncated,omitempty"`
}

// workspaceFile is the result of workspace_read.
type workspaceFile struct {
	Path       string `json:"path"`
	Bytes      int64  `json:"bytes"` // the file's size
	Offset     int64  `json:"offset"`
	Content    string `json:"content"`
	Encoding   string `json:"encoding"` // utf8, or base64 for binary content
	NextOffset int64  `json:"nextOffset,omitempty"`
}

// workspacePath checks a path the model gave: relative, inside the workspace, bounded. The
// os.Root the tools open enforces the same (and refuses symlinks that lead out); this check
// only gives the model a clear error.
func workspacePath(p string) (string, error) {
	if p == "" || p == "." || p == "./" {
		return ".", nil
	}
	if len(p) > maxWorkspacePath || strings.ContainsRune(p, 0) || !filepath.IsLocal(p) {
		return "", fmt.Errorf("path %q is not inside the workspace", textutil.Truncate(p, maxPathInError))
	}
	return filepath.ToSlash(filepath.Clean(p)), nil
}

// listWorkspace lists dir/p down to depth levels, without following symlinks.
func listWorkspace(dir, p string, depth int) (*workspaceListing, error) {
	start, err := workspacePath(p)
	if err != nil {
		return nil, err
	}
	out := &workspaceListing{Entries: []workspaceEntry{}}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) && start == "." {
		return out, nil // nothing has been written to the workspace yet
	} else if err != nil {
		return nil, workspaceError(p, err)
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), start, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name == start {
			if !d.IsDir() {
				return fmt.Errorf("%s is not a directory", start)
			}
			return nil
		}
		if len(out.Entries) >= maxWorkspaceEntries {
			out.Truncated = true
			return fs.SkipAll
		}
		e := workspaceEntry{Path: name, Type: entryType(d.Type())}
		if e.Type == "file" {
			if info, err := d.Info(); err == nil {
				e.Bytes = info.Size()
			}
		}
		out.Entries = append(out.Entries, e)
		if d.IsDir() && level(start, name) >= depth {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, workspaceError(p, err)
	}
	return out, nil
}

// level is how many levels below start name is: 1 for start's own entries.
func level(start, name string) int {
	if start == "." {
		return strings.Count(name, "/") + 1
	}
	return strings.Count(name, "/") - strings.Count(start, "/")
}

func entryType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	default:
		return "other"
	}
}

// readWorkspace reads at most n bytes of the regular file dir/p from offset.
func readWorkspace(dir, p string, offset, n int64) (*workspaceFile, error) {
	name, err := workspacePath(p)
	if err != nil {
		return nil, err
	}
	if name == "." {
		return nil, errors.New("path is required")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, workspaceError(p, err)
	}
	defer root.Close()
	// O_NONBLOCK: a FIFO planted in the workspace must not hang the turn; it is refused
	// below as not a regular file.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, workspaceError(p, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, workspaceError(p, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, workspaceError(p, err)
	}
	buf = buf[:got]
	res := &workspaceFile{Path: path.Clean(name), Bytes: info.Size(), Offset: offset, Encoding: "utf8"}
	if text, ok := utf8Prefix(buf, offset+int64(got) < info.Size()); ok {
		buf = buf[:len(text)]
		res.Content = text
	} else {
		res.Content, res.Encoding = base64.StdEncoding.EncodeToString(buf), "base64"
	}
	if end := offset + int64(len(buf)); end < info.Size() {
		res.NextOffset = end
	}
	return res, nil
}

// utf8Prefix returns b as text when it is UTF-8; when more follows, a rune cut at the end
// is left for the next read.
func utf8Prefix(b []byte, more bool) (string, bool) {
	if utf8.Valid(b) {
		return string(b), true
	}
	if more {
		for cut := 1; cut < utf8.UTFMax && cut < len(b); cut++ {
			if utf8.Valid(b[:len(b)-cut]) {
				return string(b[:len(b)-cut]), true
			}
		}
	}
	return "", false
}

// workspaceError words a file system error without the host path of the workspace.
func workspaceError(p string, err error) error {
	p = textutil.Truncate(p, maxPathInError)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file or directory in the workspace", p)
	case strings.Contains(err.Error(), "escapes"):
		return fmt.Errorf("%s: leads out of the workspace", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", p, pe.Err)
	}
	return fmt.Errorf("%s: %v", p, err)
}
