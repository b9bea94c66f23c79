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
// binaries hack/envtest-binaries.sh built, the CRDs of config/crd/bases, optionally the
// webhook configuration of config/webhook, a scheme with this API, and shared timeouts.
package testenv

import (
	"os"
	"path/filepath"
	goruntime "runtime"
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
	root := os.Getenv("AGENT_SESSIONS_CACHE")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		root = filepath.Join(cache, "agent-session-operator")
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
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
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
