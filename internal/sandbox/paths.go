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

package sandbox

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// Bounds of the sandbox tools: what a tool call may send in and what its result may carry
// back to the model, whatever the sandbox answers.
const (
	// MaxOutputBytes bounds each of an exec's stdout and stderr in its result.
	MaxOutputBytes = 32 << 10
	// MaxReadBytes bounds the bytes read reads of a file.
	MaxReadBytes = 128 << 10
	// MaxWriteBytes bounds what write and edit may put in a file.
	MaxWriteBytes = 1 << 20
	// MaxListEntries bounds the entries ls returns.
	MaxListEntries = 500
	// MaxPathBytes bounds a path argument.
	MaxPathBytes = 4096
	// MaxCommandBytes bounds an exec's command line.
	MaxCommandBytes = 16 << 10
	// DefaultExecTimeout and MaxExecTimeout bound how long an exec runs.
	DefaultExecTimeout = 60 * time.Second
	MaxExecTimeout     = 10 * time.Minute
)

// ErrOutsideWorkspace refuses a path that leaves the workspace.
var ErrOutsideWorkspace = errors.New("path is outside the workspace " + Workspace)

// WorkspacePath turns a tool's path argument into a path relative to the workspace ("." for
// the workspace itself), or refuses it: an absolute path must lie under /workspace, and ".."
// may not climb out of it. This is the manager's lexical check; sandboxd then resolves
// symlinks against its --root-dir and refuses one that leads out, so both a crafted path and
// a link the sandbox made are stopped.
func WorkspacePath(p string) (string, error) {
	switch {
	case len(p) > MaxPathBytes:
		return "", fmt.Errorf("path is longer than %d bytes", MaxPathBytes)
	case strings.ContainsRune(p, 0):
		return "", errors.New("path holds a NUL byte")
	case p == "":
		return ".", nil
	}
	if path.IsAbs(p) {
		rel, ok := strings.CutPrefix(path.Clean(p), Workspace)
		if !ok || (rel != "" && rel[0] != '/') {
			return "", ErrOutsideWorkspace
		}
		p = "." + rel
	}
	// Cleaned against a root, a path that climbs above it shows as a leading "..".
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", ErrOutsideWorkspace
	}
	return c, nil
}

// ExecTimeout is the timeout of an exec that asked for seconds (0 = the default), clamped.
func ExecTimeout(seconds int32) time.Duration {
	switch d := time.Duration(seconds) * time.Second; {
	case seconds <= 0:
		return DefaultExecTimeout
	case d > MaxExecTimeout:
		return MaxExecTimeout
	default:
		return d
	}
}

// Edit replaces the one occurrence of old in content with new: an exact match, found once,
// so the model's edit never lands somewhere it did not look.
func Edit(content, old, replacement string) (string, error) {
	if old == "" {
		return "", errors.New("oldText is empty")
	}
	switch n := strings.Count(content, old); n {
	case 0:
		return "", errors.New("oldText not found in the file")
	case 1:
	default:
		return "", fmt.Errorf("oldText occurs %d times; give more context so it occurs once", n)
	}
	out := strings.Replace(content, old, replacement, 1)
	if len(out) > MaxWriteBytes {
		return "", fmt.Errorf("the edited file would be larger than %d bytes", MaxWriteBytes)
	}
	return out, nil
}
