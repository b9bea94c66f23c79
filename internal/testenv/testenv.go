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

// Package testenv is the one place the envtest suites get their control plane from: the
// binaries hack/envtest-binaries.sh built, the CRDs of config/crd/bases and agent-sandbox's, optionally the
// webhook configuration of config/webhook, a scheme with this API, and shared timeouts.
package testenv

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/agent-sessions/agent-session-operator/internal/scheme"
)

// Timeouts shared by every Eventually/Consistently of the envtest suites. They are generous
// because the suites must pass on a loaded 2-core machine; they bound waits, they do not
// measure speed.
const (
	Timeout  = 60 * time.Second
	Interval = 50 * time.Millisecond
)

// K8sVersion is the version hack/envtest-binaries.sh builds by default.
const K8sVersion = "1.37.0"

// RepoRoot is the repository's top directory, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Assets returns the directory holding kube-apiserver, etcd and kubectl: KUBEBUILDER_ASSETS
// when set, else the default cache of hack/envtest-binaries.sh when it is complete, else "".
// It sets KUBEBUILDER_ASSETS so envtest finds the binaries.
func Assets() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	root := cacheRoot()
	if root == "" {
		return ""
	}
	dir := filepath.Join(root, "k8s-"+K8sVersion)
	for _, b := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return ""
		}
	}
	_ = os.Setenv("KUBEBUILDER_ASSETS", dir)
	return dir
}

// SandboxAssets returns the directory holding agent-sandbox's agent-sandbox-controller and
// sandboxd at the version go.mod requires: AGENT_SANDBOX_ASSETS when set, else the cache of
// hack/agent-sandbox.sh when both are there, else "".
func SandboxAssets() string {
	if dir := os.Getenv("AGENT_SANDBOX_ASSETS"); dir != "" {
		return dir
	}
	// go.mod says the version: a test binary carries no module versions of its own.
	mod, err := os.ReadFile(filepath.Join(RepoRoot(), "go.mod"))
	if err != nil {
		return ""
	}
	version := ""
	for line := range strings.Lines(string(mod)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "sigs.k8s.io/agent-sandbox" {
			version = f[1]
		}
	}
	dir := filepath.Join(cacheRoot(), "agent-sandbox-"+version)
	for _, b := range []string{"agent-sandbox-controller", "sandboxd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil || version == "" {
			return ""
		}
	}
	return dir
}

// RequireSandbox skips (fails in CI, as RequireControlPlane) a test that runs agent-sandbox's
// binaries when they are not built, and returns their directory.
func RequireSandbox(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test runs agent-sandbox's binaries")
	}
	dir := SandboxAssets()
	if dir == "" {
		const why = "no agent-sandbox binaries: run `make agent-sandbox` (or set AGENT_SANDBOX_ASSETS)"
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return dir
}

// cacheRoot is the per-machine cache the hack/ scripts build into.
func cacheRoot() string {
	if root := os.Getenv("AGENT_SESSIONS_CACHE"); root != "" {
		return root
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "agent-session-operator")
}

// SkipReason is the message suites skip with when no control plane binaries exist.
const SkipReason = "no control plane binaries: run `make envtest` (or set KUBEBUILDER_ASSETS)"

// RequireControlPlane skips a suite that needs kube-apiserver and etcd under -short (make
// test-unit) or when the binaries are missing; in CI (CI=true) missing binaries fail the
// suite instead, so a broken build step never passes as skipped tests.
func RequireControlPlane(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this suite starts a control plane")
	}
	if Assets() == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(SkipReason)
		}
		t.Skip(SkipReason)
	}
}

// Option changes the environment New builds.
type Option func(*envtest.Environment)

// WithWebhooks installs config/webhook's webhook configurations; envtest serves them from
// env.WebhookInstallOptions (LocalServingHost/Port/CertDir) with a self-signed CA.
func WithWebhooks() Option {
	return func(e *envtest.Environment) {
		e.WebhookInstallOptions = envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(RepoRoot(), "config", "webhook")},
		}
	}
}

// StartT starts a control plane with this project's CRDs for one test, stopped when the test
// ends, and returns its config and an admin client; it skips as RequireControlPlane does.
func StartT(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	RequireControlPlane(t)
	cp, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	return cp.Config, cp.Client
}

// New returns an environment with this project's CRDs; call Start on it.
func New(opts ...Option) *envtest.Environment {
	Assets()
	e := &envtest.Environment{
		CRDDirectoryPaths: []string{filepath.Join(RepoRoot(), "config", "crd", "bases"),
			// agent-sandbox's CRDs as its module ships them (hack/agent-sandbox.sh).
			filepath.Join(RepoRoot(), "config", "agent-sandbox", "crds")},
		ErrorIfCRDPathMissing: true,
		// envtest's default of 20s is short on a loaded 2-core machine, where make test
		// starts several control planes at once.
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Scheme returns a scheme with the built-in kinds and this project's API.
func Scheme() *runtime.Scheme { return scheme.New() }
