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

package storm

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/agent-sessions/agent-session-operator/controllers"
	"github.com/agent-sessions/agent-session-operator/controllers/managertest"
	"github.com/agent-sessions/agent-session-operator/controllers/sessionsend"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	transcriptclient "github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecartest"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

var (
	suite *managertest.Suite
	k8s   client.Client
	// doors is the sidecar's public listener, https://127.0.0.1:<port>: /a2a/ and /mcp.
	doors string
	// storms runs the rings on this suite's control plane and sidecar.
	storms *Cluster
)

func TestStorm(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "storm suite")
}

var _ = BeforeSuite(func() {
	// The agents' A2A and MCP tools may reach loopback only, where the sidecar listens with
	// its self-signed certificate.
	loopback, err := egress.Parse([]string{"127.0.0.1/32"}, false)
	Expect(err).NotTo(HaveOccurred())
	feed := &lateFeed{}
	suite = managertest.Start(managertest.Options{Webhooks: true, Engine: func(o *turns.Options) {
		opts := mcptools.ManagerOptions(o.APIReader, loopback)
		opts.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the test sidecar's own certificate
		o.Tools.A2A, o.Tools.MCP = a2atools.NewClient(opts), mcptools.NewPool(opts)
	}, Controllers: func(o *controllers.Options) { o.SendFeed = feed }})
	// Cleanups run last in, first out: the sidecar's (below) before the control plane's.
	DeferCleanup(func() { suite.Stop() })
	k8s = suite.Client

	// The sidecar acts as its callers (impersonation); its own user may do so anywhere.
	u, err := suite.Env.AddUser(envtest.User{Name: "transcript-store", Groups: []string{"system:masters"}}, suite.Config)
	Expect(err).NotTo(HaveOccurred())
	kc, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(os.WriteFile(kubeconfig, kc, 0o600)).To(Succeed())
	a := sidecartest.Start(GinkgoT(), transcriptstore.SidecarConfig{DefaultNamespace: "default", Kubeconfig: kubeconfig,
		Audiences: []string{Audience}, Socket: "127.0.0.1:0", APIQPSPerUser: -1})
	doors = "https://" + a.Public
	storms = &Cluster{Client: k8s, Config: suite.Config, Doors: doors}
	// The doors follow a task by the send changes the manager hands the store.
	feed.set(transcriptclient.NewLoopbackClient("http://" + a.Internal))
})

// lateFeed hands the manager's send changes to the sidecar once it runs (it starts after
// the control plane the manager brought up).
type lateFeed struct {
	mu   sync.Mutex
	feed sessionsend.SendFeed
}

func (l *lateFeed) set(f sessionsend.SendFeed) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.feed = f
}

func (l *lateFeed) PublishSendChange(c transcript.SendChange) {
	l.mu.Lock()
	f := l.feed
	l.mu.Unlock()
	if f != nil {
		f.PublishSendChange(c)
	}
}
