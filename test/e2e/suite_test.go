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

// Package e2e is the black-box suite: the built binaries on a local control plane (what
// make run-local starts), driven with the real kubectl.
package e2e

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

var (
	binDir string
	// workDir stands for the repository root of a make run-local: its .local/run-local is
	// the cluster's state directory.
	workDir string
	cluster *devcluster.Cluster
	ctx     = context.Background()
	// clusterLog is everything the cluster's processes printed, as make run-local prints it;
	// startupLog is its part up to the samples' end (the sample send and spawn finished).
	clusterLog syncBuffer
	startupLog string
)

// syncBuffer is a bytes.Buffer that the processes' output goroutines and a spec share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e builds the binaries and starts a control plane")
	}
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "e2e suite")
}

var _ = BeforeSuite(func() {
	binDir = GinkgoT().TempDir()
	build := exec.Command("go", "build", "-o", binDir+"/", "./cmd/manager", "./cmd/transcript-store", "./cmd/kubectl-sessions")
	build.Dir = testenv.RepoRoot()
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))

	workDir = GinkgoT().TempDir()
	cluster, err = devcluster.Start(ctx, devcluster.Options{
		RepoRoot: testenv.RepoRoot(),
		BinDir:   binDir,
		StateDir: filepath.Join(workDir, ".local", "run-local"),
		Log:      io.MultiWriter(GinkgoWriter, &clusterLog),
		// As make run-local does: the MCP pages' tour steps use it. The A2A cards are signed
		// with the cluster's development key (a2a_v1_test.go checks the signature).
		MCPEverything: true,
	})
	Expect(err).NotTo(HaveOccurred())

	// The start-up a person watches ends when the samples have: the sample spawn has
	// announced (its Event is written after its status) and the sample send completed.
	Eventually(func() (string, error) {
		return kubectl("events", "--for", "agentsession/main-main")
	}, testenv.Timeout, testenv.Interval).Should(ContainSubstring("AnnounceDelivered"))
	Eventually(func() (string, error) {
		return kubectl("get", "sessionsend", "ping-research", "-o", "jsonpath={.status.phase}")
	}, testenv.Timeout, testenv.Interval).Should(Equal("Completed"))
	startupLog = clusterLog.String()
})

var _ = AfterSuite(func() {
	if cluster != nil {
		cluster.Stop()
	}
})

// kubectl runs the built kubectl against the cluster and returns its combined output.
func kubectl(args ...string) (string, error) {
	var out bytes.Buffer
	err := cluster.Kubectl(ctx, &out, args...)
	return out.String(), err
}

// plugin runs the built kubectl-sessions against the cluster; it returns the output and the
// exit code.
func plugin(args ...string) (string, int) {
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "kubectl-sessions"),
		append([]string{"--kubeconfig", cluster.Kubeconfig, "--history-url", cluster.HistoryURL(), "--history-ca-file", cluster.HistoryCAFile}, args...)...)
	out, err := cmd.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); ok {
		return string(out), exit.ExitCode()
	}
	Expect(err).NotTo(HaveOccurred())
	return string(out), 0
}
