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
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/webhook"
)

var (
	cp  *testenv.ControlPlane
	env *envtest.Environment
	cfg *rest.Config
	k8s client.Client
	// manager is a direct client that speaks as testenv.ManagerUser.
	manager client.Client
	// cached is the manager's cached client: what the webhooks read.
	cached client.Reader
	// clk is the webhooks' clock; it stands still.
	clk    *clocktesting.FakePassiveClock
	ctx    = context.Background()
	cancel context.CancelFunc
)

func TestWebhooks(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "webhook suite")
}

var _ = BeforeSuite(func() {
	var err error
	cp, err = testenv.Start(testenv.WithWebhooks())
	Expect(err).NotTo(HaveOccurred())
	env, cfg, k8s = cp.Env, cp.Config, cp.Client
	manager, err = client.New(testenv.AsManager(cfg), client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())

	// The webhooks alone, as the admin, on an unfiltered cache.
	mgr, err := testenv.NewManager(ctx, env, cfg, cache.Options{})
	Expect(err).NotTo(HaveOccurred())
	// The rate buckets never refill during the suite: its rate case counts tokens, not time.
	clk = clocktesting.NewFakePassiveClock(time.Now())
	Expect(webhook.SetupWithManager(mgr, webhook.Options{ManagerUsername: testenv.ManagerUser, Clock: clk})).To(Succeed())
	cached = mgr.GetClient()
	cancel, err = testenv.RunWithWebhooks(ctx, mgr)
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	Expect(cp.Stop()).To(Succeed())
})
