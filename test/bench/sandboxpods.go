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
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

func init() {
	register("sandbox-pods", benchSandboxPods)
}

// sandboxPodsNeedsRoot is what the suite says when it cannot run.
const sandboxPodsNeedsRoot = "bench: suite sandbox-pods skipped: it runs real sandbox Pods under the cluster test's kubelet " +
	"and containerd, which need root (as root: make bench BENCH_FLAGS='-run ^sandbox-pods$')"

// benchSandboxPods times sandboxes that are real Pods: sandbox_warm_claim_ms (a claim from a
// warm pool to the first exec answered, p50 and p99) beside a plain Pod's start in the same
// run, sandbox_cold_start_ms, sandbox_resume_ms and exec through the port-forward. Real Pods
// need a kubelet: the suite runs the cluster test's TestSandboxFigures (test/cluster, the
// harness of make test-cluster: root, Linux, a network namespace of its own), which writes
// the figures to a file this reads. Without root it is skipped, saying so.
func benchSandboxPods() ([]Figure, error) {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, sandboxPodsNeedsRoot)
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "bench-sandbox-pods-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "figures.jsonl")
	logPath := filepath.Join(os.TempDir(), "bench-sandbox-pods.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command("go", "test", "-tags", "cluster", "-count=1", "-timeout", "50m", "-v",
		"-run", "^TestSandboxFigures$", "./test/cluster/")
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), "ASO_SANDBOX_FIGURES="+out)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("the cluster test's TestSandboxFigures: %v (its log: %s)", err, logPath)
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, fmt.Errorf("no figures from TestSandboxFigures (its log: %s): %w", logPath, err)
	}
	defer f.Close()
	var figs []Figure
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var fig Figure
		if err := json.Unmarshal(sc.Bytes(), &fig); err != nil {
			return nil, fmt.Errorf("figure line %q: %w", sc.Text(), err)
		}
		figs = append(figs, fig)
	}
	if len(figs) == 0 {
		return nil, errors.New("TestSandboxFigures wrote no figures (its log: " + logPath + ")")
	}
	return figs, sc.Err()
}
