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

// Package storm runs agents that call each other on every input through the whole manager:
// controllers, the turn engine on the scripted provider and the admission webhooks behind a
// real API server, the manager speaking as its own user so the webhook tells its tool-made
// objects from a person's.
package storm

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/agent-sessions/agent-session-operator/controllers"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/eventrec"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	transcriptstore "github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	"github.com/agent-sessions/agent-session-operator/webhook"
)

// managerUser is the user the suite's manager impersonates.
const managerUser = "system:serviceaccount:agent-sessions:manager"

var (
	env    *envtest.Environment
	cfg    *rest.Config
	k8s    client.Client
	ctx    = context.Background()
	cancel context.CancelFunc
)

func TestStorm(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "storm suite")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	env = testenv.New(testenv.WithWebhooks())
	var err error
	cfg, err = env.Start()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())

	mcfg := rest.CopyConfig(cfg)
	mcfg.Impersonate = rest.ImpersonationConfig{UserName: managerUser, Groups: []string{"system:masters"}}
	mgr, err := ctrl.NewManager(mcfg, ctrl.Options{
		Scheme:        testenv.Scheme(),
		Metrics:       metricsserver.Options{BindAddress: "0"},
		Cache:         cacheindex.CacheOptions(),
		Controller:    config.Controller{SkipNameValidation: ptr.To(true)},
		WebhookServer: testenv.WebhookServer(env),
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(cacheindex.Setup(ctx, mgr.GetFieldIndexer())).To(Succeed())
	store, err := transcriptstore.OpenFileStore(GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(store.Close)
	watcher, err := client.NewWithWatch(mcfg, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	events := eventrec.New(mgr.GetClient(), mgr.GetScheme(), eventrec.Options{})
	Expect(mgr.Add(events)).To(Succeed())
	engine, err := turns.NewEngine(turns.Options{
		Client: mgr.GetClient(), Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Watcher: watcher,
		Store: store, Recorder: events.GetEventRecorder("agent-runtime"),
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(mgr.Add(engine)).To(Succeed())
	Expect(controllers.SetupWithManager(mgr, controllers.Options{
		Runner: engine, Store: store, WorkspaceRoot: GinkgoT().TempDir(), Events: events,
	})).To(Succeed())
	Expect(webhook.SetupWithManager(mgr, webhook.Options{ManagerUsername: managerUser,
		Events: events.GetEventRecorder("admission")})).To(Succeed())
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
