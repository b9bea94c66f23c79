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

package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ToolDir runs a hack/ script that builds tools once per machine into the cache (helm,
// krew, the Kubernetes binaries) and returns the directory it prints last.
func ToolDir(t testing.TB, script string, args ...string) string {
	t.Helper()
	out := Run(t, RepoRoot(), nil, filepath.Join(RepoRoot(), script), args...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// Run runs a command in dir with env added to the test's environment and returns its
// standard output; a failure ends the test with the command's standard error.
func Run(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := RunErr(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

// RunErr is Run for a command that may fail: the error carries its standard error.
func RunErr(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), &CommandError{Err: err, Stderr: stderr.String()}
	}
	return string(out), nil
}

// CommandError is a failed command with what it wrote to standard error.
type CommandError struct {
	Err    error
	Stderr string
}

func (e *CommandError) Error() string { return e.Err.Error() + "\n" + e.Stderr }
