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

// Package approval runs tool calls that wait for a person through the whole manager:
// controllers, the turn engine on the scripted provider with a real MCP server, and the
// admission webhooks behind a real API server, the manager speaking as its own user and the
// approvers as theirs (client certificates), so every decision goes the real admission path.
package approval

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
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
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/agent-sessions/agent-session-operator/controllers"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/eventrec"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	transcriptstore "github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	"github.com/agent-sessions/agent-session-operator/webhook"
)

// managerUser is the user the suite's manager impersonates.
const managerUser = "system:serviceaccount:agent-sessions:manager"

// mcpHost is the one loopback address the manager's egress policy lets MCP servers use.
const mcpHost = "127.0.0.2"

// maxTurns is the engine's bound here: far below the number of turns that wait at once in
// the spec that checks a waiting turn holds no slot.
const maxTurns = 8

var (
	env       *envtest.Environment
	cfg       *rest.Config
	k8s       client.Client
	ctx       = context.Background()
	fakeClock *clocktesting.FakeClock
	dataDir   string
	store     *transcriptstore.FileStore
	engine    *turns.Engine
	mgrStop   context.CancelFunc
	mgrDone   chan struct{}
	// sink is the chat bridge of the webchat channel: it keeps every message posted to it.
	sink     *httptest.Server
	sinkMu   sync.Mutex
	sinkMsgs []delivery.Message
)

// posted are the messages the sink received.
func posted() []delivery.Message {
	sinkMu.Lock()
	defer sinkMu.Unlock()
	return slices.Clone(sinkMsgs)
}

func TestApproval(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "approval suite")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	env = testenv.New(testenv.WithWebhooks())
	var err error
	cfg, err = env.Start()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	fakeClock = clocktesting.NewFakeClock(time.Now())
	dataDir = GinkgoT().TempDir()
	sink = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m delivery.Message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sinkMu.Lock()
		sinkMsgs = append(sinkMsgs, m)
		sinkMu.Unlock()
	}))
	DeferCleanup(sink.Close)
	startManager()
})

var _ = AfterSuite(func() {
	stopManager()
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// startManager runs a manager as cmd/manager does, on the suite's clock and store (a second
// call after stopManager is a restart: the same transcripts, a new engine and caches).
func startManager() {
	var err error
	store, err = transcriptstore.OpenFileStore(dataDir + "/transcripts")
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
	watcher, err := client.NewWithWatch(mcfg, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	events := eventrec.New(mgr.GetClient(), mgr.GetScheme(), eventrec.Options{})
	Expect(mgr.Add(events)).To(Succeed())
	engine, err = turns.NewEngine(turns.Options{
		Client: mgr.GetClient(), Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Watcher: watcher,
		Store: store, Clock: fakeClock, Recorder: events.GetEventRecorder("agent-runtime"),
		MaxConcurrentTurns: maxTurns,
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(mgr.Add(engine)).To(Succeed())
	closed, err := egress.Parse([]string{mcpHost + "/32"}, false)
	Expect(err).NotTo(HaveOccurred())
	mcp := mcptools.NewPool(mcptools.ManagerOptions(mgr.GetAPIReader(), closed))
	engine.UseTools(turns.ToolSources{MCP: mcp})
	allowSink, err := egress.Parse([]string{sink.URL + "/"}, false)
	Expect(err).NotTo(HaveOccurred())
	Expect(controllers.SetupWithManager(mgr, controllers.Options{
		Runner: engine, Store: store, Clock: fakeClock, Events: events, MCP: mcp, WorkspaceRoot: dataDir + "/workspaces",
		Deliverer: delivery.New(allowSink),
	})).To(Succeed())
	Expect(webhook.SetupWithManager(mgr, webhook.Options{ManagerUsername: managerUser,
		Events: events.GetEventRecorder("admission")})).To(Succeed())
	mctx, cancel := context.WithCancel(ctx)
	mgrStop, mgrDone = cancel, make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(mgrDone)
		Expect(mgr.Start(mctx)).To(Succeed())
	}()
	Eventually(func() error { return mgr.GetWebhookServer().StartedChecker()(nil) }, testenv.Timeout, testenv.Interval).Should(Succeed())
	Expect(mgr.GetCache().WaitForCacheSync(mctx)).To(BeTrue())
}

// stopManager ends the manager as a SIGTERM would.
func stopManager() {
	if mgrStop == nil {
		return
	}
	mgrStop()
	<-mgrDone
	Expect(store.Close()).To(Succeed())
	mgrStop = nil
}
