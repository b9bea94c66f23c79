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
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/agent-sessions/agent-session-operator/internal/sandbox/sandboxd"
)

// StartSandboxController runs kubernetes-sigs/agent-sandbox's own controller (core and
// extensions: Sandbox, SandboxClaim, SandboxTemplate, SandboxWarmPool) as a process against
// the control plane of cfg until the test ends. It runs without its conversion webhook (only
// the storage version v1beta1 is used) and without leader election. Its log goes to the
// test's output, shown when the test fails or runs with -v.
func StartSandboxController(t testing.TB, cfg *rest.Config) {
	t.Helper()
	dir := RequireSandbox(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := WriteKubeconfig(cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "agent-sandbox-controller"), SandboxControllerArgs()...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = t.Output(), t.Output()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
}

// SandboxControllerArgs are agent-sandbox-controller's flags outside a cluster: extensions
// on, no webhook, no leader election, no metrics or probe listeners.
func SandboxControllerArgs() []string {
	return []string{"--extensions", "--enable-webhook=false", "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0"}
}

// WriteKubeconfig writes a kubeconfig for cfg's user (envtest's admin: a client certificate).
func WriteKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	return nil
}

// StartSandboxd runs agent-sandbox's sandboxd on free loopback ports with root as its
// workspace (--root-dir) until the test ends, and returns a client of it that dials it
// directly (in a cluster the manager dials through a port-forward).
func StartSandboxd(t testing.TB, root string) *sandboxd.Client {
	t.Helper()
	c, stop, err := RunSandboxd(RequireSandbox(t), root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return c
}

// RunSandboxd is StartSandboxd for a program (the benchmarks): the sandboxd of dir, and a
// stop that ends it.
func RunSandboxd(dir, root string) (*sandboxd.Client, func(), error) {
	grpcPort, restPort, kill, err := runSandboxd(dir, root)
	if err != nil {
		return nil, nil, err
	}
	c, err := sandboxd.New(loopbackDial, grpcPort, restPort)
	if err != nil {
		kill()
		return nil, nil, err
	}
	return c, func() { _ = c.Close(); kill() }, nil
}

// StartSandboxdPorts runs sandboxd as StartSandboxd does and returns its gRPC and REST ports
// on 127.0.0.1, for a test that dials it as a Pod's port-forward would.
func StartSandboxdPorts(t testing.TB, root string) (grpcPort, restPort int) {
	t.Helper()
	grpcPort, restPort, kill, err := runSandboxd(RequireSandbox(t), root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kill)
	return grpcPort, restPort
}

func loopbackDial(ctx context.Context, port int) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(port))
}

// runSandboxd starts sandboxd on two free loopback ports and returns once its REST port
// takes connections.
func runSandboxd(dir, root string) (int, int, func(), error) {
	ports := make([]int, 2)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, nil, err
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	cmd := exec.Command(filepath.Join(dir, "sandboxd"), "--root-dir="+root,
		"--grpc-port="+strconv.Itoa(ports[0]), "--rest-port="+strconv.Itoa(ports[1]))
	if err := cmd.Start(); err != nil {
		return 0, 0, nil, err
	}
	kill := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), Interval, Timeout, true, func(ctx context.Context) (bool, error) {
		c, err := loopbackDial(ctx, ports[1])
		if err != nil {
			last = err
			return false, nil
		}
		_ = c.Close()
		return true, nil
	})
	if err != nil {
		kill()
		return 0, 0, nil, fmt.Errorf("sandboxd did not listen: %w (%v)", err, last)
	}
	return ports[0], ports[1], kill, nil
}

// Eventually polls cond every Interval until it holds, failing the test with what and the
// last error once Timeout passes: the plain tests' Eventually (Ginkgo suites have Gomega's).
func Eventually(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), Interval, Timeout, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not by %v (last error: %v)", what, Timeout, last)
	}
}
