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

// Package managertest runs the whole manager for a Ginkgo suite, built as cmd/manager builds
// it: on a control plane from internal/testenv, the controllers, the turn engine with
// transcripts in a FileStore on disk, optionally the admission webhooks. Options say what a
// suite changes; its BeforeSuite is a call to Start. It sits above the controllers and the
// webhooks (test/layers), which internal/testenv may not import.
package managertest

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/agent-sessions/agent-session-operator/controllers"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/eventrec"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/memory"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/search"
	transcriptstore "github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	sidecar "github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	"github.com/agent-sessions/agent-session-operator/webhook"
)

// Options say what differs between the suites; the zero value is a manager without
// webhooks, MCP pool, sink or workspace tools, on the real clock.
type Options struct {
	// Webhooks installs config/webhook and serves the admission webhooks from the manager,
	// which then speaks as testenv.ManagerUser so admission tells its objects from a person's.
	Webhooks bool
	// Clock is the engine's and the controllers' clock; nil is the real clock.
	Clock clock.WithTickerAndDelayedExecution
	// Wrap wraps the manager's transport (a suite that counts the manager's writes).
	Wrap transport.WrapperFunc
	// MCPHost is the one loopback address the manager's MCP pool may dial, where the suite's
	// MCP servers listen; "" runs no pool.
	MCPHost string
	// WorkspaceTools offers the engine's workspace tools, in DataDir/workspaces.
	WorkspaceTools bool
	// Sink is the URL of the suite's announce sink, on loopback, which the default egress
	// refuses; "" keeps the controllers' default deliverer.
	Sink string
	// Engine edits the turn engine's options before it is built: the provider, egress,
	// bounds, a client that checks what the engine writes.
	Engine func(*turns.Options)
	// Controllers edits the controllers' options before they are set up: TTLs, timeouts,
	// the deliverer's backoff.
	Controllers func(*controllers.Options)
	// Indexes feeds the transcript-store's full-text and memory indexes from the store and
	// gives the engine the store with them, as the sidecar's internal API does.
	Indexes bool
}

// Suite is a control plane and the manager running on it.
type Suite struct {
	*testenv.ControlPlane
	// DataDir holds transcripts/ and workspaces/; a restarted manager finds them again.
	DataDir string
	// Manager is the running manager; nil between StopManager and StartManager.
	Manager *Manager
	opts    Options
}

// Manager is a running manager and the parts of it specs reach into.
type Manager struct {
	ctrl.Manager
	Engine *turns.Engine
	Store  *transcriptstore.FileStore
	// Retired keeps the records of the sessions the SessionPolicy's retention retired, as
	// the sidecar keeps them beside the transcripts.
	Retired *transcriptstore.RetiredStore
	// Words and Memory are the store's indexes with Options.Indexes, else nil.
	Words  *search.Index
	Memory *memory.Index
	stop   context.CancelFunc
	done   chan struct{}
}

// Start logs to the GinkgoWriter, starts a control plane and runs a manager on it.
func Start(o Options) *Suite {
	ctrl.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true)))
	var envOpts []testenv.Option
	if o.Webhooks {
		envOpts = append(envOpts, testenv.WithWebhooks())
	}
	cp, err := testenv.Start(envOpts...)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	s := &Suite{ControlPlane: cp, DataDir: ginkgo.GinkgoT().TempDir(), opts: o}
	s.StartManager()
	return s
}

// Stop ends the manager and the control plane; on nil (a suite whose start failed) it does
// nothing.
func (s *Suite) Stop() {
	if s == nil {
		return
	}
	s.StopManager()
	gomega.Expect(s.ControlPlane.Stop()).To(gomega.Succeed())
}

// StartManager runs a manager as cmd/manager does, on the suite's clock and DataDir (after
// StopManager it is a restart: the same transcripts, a new engine and caches). It returns
// once the manager's cache has synced and its webhook server, if any, answers.
func (s *Suite) StartManager() {
	o := s.opts
	ctx := context.Background()
	var words *search.Index
	var mem *memory.Index
	var storeOpts []transcriptstore.Option
	if o.Indexes {
		var err error
		words, mem, err = sidecar.OpenIndexes(s.DataDir+"/transcripts", ctrl.Log.WithName("indexes"))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		storeOpts = append(words.StoreOptions(), mem.StoreOptions()...)
	}
	store, err := transcriptstore.OpenFileStore(s.DataDir+"/transcripts", storeOpts...)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	retired, err := sidecar.OpenRetiredStore(s.DataDir + "/transcripts")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	var engineStore transcript.Store = store
	if o.Indexes {
		words.Start(store)
		mem.Start(store)
		engineStore = sidecar.Indexed{FileStore: store, Words: words, Memory: mem}
	}
	mcfg := rest.CopyConfig(s.Config)
	if o.Webhooks {
		mcfg = testenv.AsManager(mcfg)
	}
	if o.Wrap != nil {
		mcfg.Wrap(o.Wrap)
	}
	// The manager's cache options, so specs run against what it caches.
	mgr, err := testenv.NewManager(ctx, s.Env, mcfg, cacheindex.CacheOptions())
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	watcher, err := client.NewWithWatch(mcfg, client.Options{Scheme: testenv.Scheme()})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	// The manager's event recorder, on the real clock: no spec times events.
	events := eventrec.New(mgr.GetClient(), mgr.GetScheme(), eventrec.Options{})
	gomega.Expect(mgr.Add(events)).To(gomega.Succeed())

	// One budget ledger for the engine and the controllers, as cmd/manager builds it.
	ledger := budget.NewLedger(mgr.GetCache(), o.Clock)
	co := controllers.Options{
		Store: store, Clock: o.Clock, WorkspaceRoot: s.DataDir + "/workspaces", Events: events, Budget: ledger, Retirer: retired,
	}
	eo := turns.Options{
		Client: mgr.GetClient(), Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Watcher: watcher,
		Store: engineStore, Retired: sidecar.RetiredRecords{Records: retired, Files: store}, Clock: o.Clock, Recorder: events.GetEventRecorder("agent-runtime"), Budget: ledger,
	}
	if o.MCPHost != "" {
		closed, err := egress.Parse([]string{o.MCPHost + "/32"}, false)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		co.MCP = mcptools.NewPool(mcptools.ManagerOptions(mgr.GetAPIReader(), closed))
		eo.Tools.MCP = co.MCP
	}
	if o.WorkspaceTools {
		eo.Tools.WorkspaceRoot = co.WorkspaceRoot
	}
	if o.Engine != nil {
		o.Engine(&eo)
	}
	engine, err := turns.NewEngine(eo)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(mgr.Add(engine)).To(gomega.Succeed())
	co.Runner = engine
	if o.Sink != "" {
		allowSink, err := egress.Parse([]string{o.Sink + "/"}, false)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		co.Deliverer = delivery.New(allowSink)
	}
	if o.Controllers != nil {
		o.Controllers(&co)
	}
	gomega.Expect(controllers.SetupWithManager(mgr, co)).To(gomega.Succeed())
	if o.Webhooks {
		gomega.Expect(webhook.SetupWithManager(mgr, webhook.Options{ManagerUsername: testenv.ManagerUser,
			Events: events.GetEventRecorder("admission")})).To(gomega.Succeed())
	}

	mctx, cancel := context.WithCancel(ctx)
	m := &Manager{Manager: mgr, Engine: engine, Store: store, Retired: retired, Words: words, Memory: mem, stop: cancel, done: make(chan struct{})}
	go func() {
		defer ginkgo.GinkgoRecover()
		defer close(m.done)
		gomega.Expect(mgr.Start(mctx)).To(gomega.Succeed())
	}()
	s.Manager = m
	if o.Webhooks {
		gomega.Eventually(func() error { return mgr.GetWebhookServer().StartedChecker()(nil) },
			testenv.Timeout, testenv.Interval).Should(gomega.Succeed())
	}
	gomega.Expect(mgr.GetCache().WaitForCacheSync(mctx)).To(gomega.BeTrue())
}

// StopManager ends the manager as a SIGTERM would and closes its store; without a running
// manager it does nothing.
func (s *Suite) StopManager() {
	if s == nil || s.Manager == nil {
		return
	}
	m := s.Manager
	s.Manager = nil
	m.stop()
	<-m.done
	if m.Memory != nil {
		gomega.Expect(m.Memory.Close()).To(gomega.Succeed())
		gomega.Expect(m.Words.Close()).To(gomega.Succeed())
	}
	gomega.Expect(m.Store.Close()).To(gomega.Succeed())
}
