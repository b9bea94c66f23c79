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

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

func init() {
	register("sandbox", benchSandbox)
}

// sandboxExecs is how many `exec true` calls each side makes.
const sandboxExecs = 300

// benchSandbox times the sandbox tools' exec path: `true` run by agent-sandbox's sandboxd
// through the manager's client (gRPC streaming Start, output bounds), side by side with a
// plain fork and exec of `true` by this process, alternating so a change of load falls on
// both. sandboxd listens on loopback here; in a cluster the manager reaches it through the
// API server's port-forward, which these figures do not include.
func benchSandbox() ([]Figure, error) {
	dir := testenv.SandboxAssets()
	if dir == "" {
		return nil, errors.New("no agent-sandbox binaries: run make agent-sandbox")
	}
	root, err := os.MkdirTemp("", "sandbox-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	c, stop, err := testenv.RunSandboxd(dir, root)
	if err != nil {
		return nil, err
	}
	defer stop()
	ctx := context.Background()
	argv := []string{"true"}
	// One call first: the gRPC connection is made once per sandbox Pod, not per call.
	if _, err := c.Exec(ctx, argv, ".", sandbox.DefaultExecTimeout, sandbox.MaxOutputBytes); err != nil {
		return nil, err
	}
	var viaSandboxd, local []time.Duration
	for range sandboxExecs {
		began := time.Now()
		res, err := c.Exec(ctx, argv, ".", sandbox.DefaultExecTimeout, sandbox.MaxOutputBytes)
		if err != nil || res.ExitCode != 0 {
			return nil, fmt.Errorf("exec true in sandboxd: %v (exit %d)", err, res.ExitCode)
		}
		viaSandboxd = append(viaSandboxd, time.Since(began))
		began = time.Now()
		if err := exec.Command("true").Run(); err != nil {
			return nil, err
		}
		local = append(local, time.Since(began))
	}
	target := "no bound yet: sandboxd on loopback vs a local fork+exec of true (the cluster figure adds the port-forward)"
	return []Figure{
		Compare("sandbox_exec_overhead_ms", quantileMS(viaSandboxd, 0.5), quantileMS(local, 0.5), "ms p50", target),
		Compare("sandbox_exec_overhead_p99_ms", quantileMS(viaSandboxd, 0.99), quantileMS(local, 0.99), "ms p99", target),
	}, nil
}
