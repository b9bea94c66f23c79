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

// Package harness runs a one-node Kubernetes cluster on this machine for the cluster test:
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, containerd and a
// kubelet, all inside a network namespace and a cgroup of their own so that nothing leaves
// the machine and everything can be torn down, whatever happened.
//
// The test binary runs twice: the outer run (host.go) prepares the host (binaries, images,
// network namespace, cgroups), re-executes itself inside the namespace and tears everything
// down afterwards; the inner run (node.go) starts the cluster and runs the tests.
package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Addresses inside the network namespace; nothing outside it can reach them.
const (
	NodeIP      = "10.213.0.2"
	nodeCIDR    = "10.213.0.2/24"
	PodCIDR     = "10.244.0.0/24"
	ServiceCIDR = "10.96.0.0/24"
	apiServerIP = "10.96.0.1"
	NodeName    = "node1"
	// SandboxImage is the pause image Debian's containerd 1.6 asks for.
	SandboxImage = "registry.k8s.io/pause:3.6"
	// OperatorImage is the repository the test's operator images are tagged in.
	OperatorImage = "localhost/agent-session-operator"
	// SandboxRuntimeImage is the default sandbox image (images.Sandbox: sandboxd, busybox),
	// the manager's --sandbox-image in the sandbox test.
	SandboxRuntimeImage = "localhost/agent-session-operator-sandbox:v1"
	// SandboxControllerImage is agent-sandbox's controller, built from the module go.mod
	// requires (hack/agent-sandbox.sh).
	SandboxControllerImage = "localhost/agent-sandbox-controller:v1"
	// RunscPath is Debian's gVisor runtime; with it the node offers the runtime handler
	// "runsc" (RuntimeClass gvisor).
	RunscPath = "/usr/bin/runsc"
)

// Env carries the outer run's preparations to the inner run.
const envPrefix = "ASO_CLUSTER_"

// Config is what both runs share.
type Config struct {
	ID       string // names the network namespace and the cgroup
	WorkDir  string // everything the cluster writes
	RepoRoot string
	K8sBin   string // kubelet, kube-apiserver, ... (hack/envtest-binaries.sh, hack/cluster-binaries.sh)
}

func (c Config) netns() string  { return "aso-" + c.ID }
func (c Config) cgroup() string { return "aso-" + c.ID }
func (c Config) path(p ...string) string {
	return filepath.Join(append([]string{c.WorkDir}, p...)...)
}

// ImageTarball is where the outer run wrote the image tagged tag.
func (c Config) ImageTarball(tag string) string { return c.path("images", tag+".tar") }

// Inner reports whether this process is the inner run.
func Inner() bool { return os.Getenv(envPrefix+"ID") != "" }

func (c Config) environ() []string {
	return []string{
		envPrefix + "ID=" + c.ID, envPrefix + "WORKDIR=" + c.WorkDir,
		envPrefix + "REPO=" + c.RepoRoot, envPrefix + "K8SBIN=" + c.K8sBin,
	}
}

// FromEnv is the inner run's Config.
func FromEnv() (Config, error) {
	c := Config{
		ID: os.Getenv(envPrefix + "ID"), WorkDir: os.Getenv(envPrefix + "WORKDIR"),
		RepoRoot: os.Getenv(envPrefix + "REPO"), K8sBin: os.Getenv(envPrefix + "K8SBIN"),
	}
	if c.ID == "" || c.WorkDir == "" || c.RepoRoot == "" || c.K8sBin == "" {
		return c, fmt.Errorf("incomplete %s* environment", envPrefix)
	}
	return c, nil
}

// Tail is the end of a component's log, for failure messages.
func (c Config) Tail(component string, lines int) string {
	b, err := os.ReadFile(c.path("logs", component+".log"))
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
