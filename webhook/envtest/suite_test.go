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

// Package envtest runs the admission webhooks behind a real API server: envtest installs
// config/webhook with a self-signed CA and the API server calls the manager's webhook server
// over TLS, so every decision here went through the real admission path.
package envtest

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/webhook"
)

// managerUser is the user the suite's "manager" client impersonates.
const managerUser = "system:serviceaccount:agent-sessions:manager"

var (
	env     *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	manager client.Client
	// cached is the manager's cached client: what the webhooks read.
	cached client.Reader
	ctx    = context.Background()
	cancel context.CancelFunc
)

func TestWebhooks(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "webhook suite")
}

var _ = BeforeSuite(func() {
	env = testenv.New(testenv.WithWebhooks())
	var err error
	cfg, err = env.Start()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	mcfg := rest.CopyConfig(cfg)
	mcfg.Impersonate = rest.ImpersonationConfig{UserName: managerUser, Groups: []string{"system:masters"}}
	manager, err = client.New(mcfg, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:        testenv.Scheme(),
		Metrics:       metricsserver.Options{BindAddress: "0"},
		Controller:    config.Controller{SkipNameValidation: ptr.To(true)},
		WebhookServer: testenv.WebhookServer(env),
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(cacheindex.Setup(ctx, mgr.GetFieldIndexer())).To(Succeed())
	// The rate buckets never refill during the suite: its rate case counts tokens, not time.
	Expect(webhook.SetupWithManager(mgr, webhook.Options{ManagerUsername: managerUser,
		Clock: clocktesting.NewFakePassiveClock(time.Now())})).To(Succeed())
	cached = mgr.GetClient()
	cancel, err = testenv.RunWithWebhooks(ctx, mgr)
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
