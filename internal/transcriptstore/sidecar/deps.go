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

package sidecar

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/memory"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/search"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// The sidecar's API client rate (the manager's are flags; the sidecar's work is bounded by
// its callers' stream caps and the webhook's create rate).
const (
	apiQPS   = 100
	apiBurst = 200
)

// deps are what the doors are built from, each built once.
type deps struct {
	cfg     transcriptstore.SidecarConfig
	log     logr.Logger
	reg     *prometheus.Registry
	limits  transcriptstore.UserLimits
	hub     *events.Hub
	keyring *transcriptstore.HookKeyring // the hooks the store serves, as the manager hands them
	// With --insecure-no-auth these are nil: no API access, so no caller can be told apart.
	rc      *rest.Config
	authz   *transcriptstore.KubeAuthorizer
	objects client.Reader // the watched sessions, sends and runs
	callers mcpserver.Options
	// eventsDoor serves /events and its streams' subscriptions (/events/): one handler, which
	// holds the open streams.
	eventsDoor http.Handler
	index      *search.Index
	mem        *memory.Index
	store      *store.FileStore
	// closeStore closes the store once: the drain closes it between the two servers'
	// shutdowns, the cleanup after a failed start.
	closeStore           func() error
	internalLn, publicLn net.Listener
	ready                atomic.Bool
}

func withDefaults(cfg transcriptstore.SidecarConfig) transcriptstore.SidecarConfig {
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 20 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return cfg
}

// open builds the dependencies in order; cleanup undoes what was built, last first, and is
// called by open itself when a step fails.
func open(ctx context.Context, cfg transcriptstore.SidecarConfig) (_ *deps, cleanup func(), err error) {
	var undo []func()
	undoAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			undoAll()
		}
	}()
	d := &deps{cfg: cfg, log: cfg.Log, reg: prometheus.NewRegistry(), limits: transcriptstore.NewUserLimits(cfg),
		hub: transcriptstore.NewEventHub(), keyring: transcriptstore.NewHookKeyring()}
	d.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err = d.openAPI(ctx); err != nil {
		return nil, nil, err
	}
	if d.index, err = transcriptstore.OpenSearchIndex(cfg.DataDir, d.log.WithName("search")); err != nil {
		return nil, nil, err
	}
	undo = append(undo, func() { _ = d.index.Close() })
	if d.mem, err = transcriptstore.OpenMemoryIndex(cfg.DataDir, d.log.WithName("memory"), memory.NewMetrics(d.reg)); err != nil {
		return nil, nil, err
	}
	undo = append(undo, func() { _ = d.mem.Close() })
	if err = d.openStore(); err != nil {
		return nil, nil, err
	}
	undo = append(undo, func() { _ = d.closeStore() })
	if d.authz != nil {
		// /mcp's, the console actions' and A2A's: each call made as the caller.
		d.callers, err = transcriptstore.CallerOptions(d.rc, cfg, d.authz, transcriptstore.SearchableStore(d.store, d.index, d.mem),
			d.objects, d.limits)
		if err != nil {
			return nil, nil, err
		}
	}
	d.eventsDoor = transcriptstore.NewEventsHandler(d.hub, d.authorizer(), d.store, d.objects, cfg.DefaultNamespace,
		d.log.WithName("events"))
	if d.internalLn, err = listenInternal(cfg.Socket); err != nil {
		return nil, nil, err
	}
	undo = append(undo, func() { d.removeSocket(); d.log.Info("transcript-store stopped") })
	if d.publicLn, err = d.listenPublic(ctx); err != nil {
		return nil, nil, err
	}
	undo = append(undo, func() { _ = d.publicLn.Close() })
	return d, undoAll, nil
}

// openAPI builds the API clients, the authorizer, the watch of sessions, sends and runs and
// the callers' options; none with --insecure-no-auth.
func (d *deps) openAPI(ctx context.Context) error {
	if d.cfg.InsecureNoAuth {
		d.log.Info("WARNING: --insecure-no-auth is set: the history API serves every transcript to anyone who can reach " +
			d.cfg.Listen + ". Use this for local runs only, never in a cluster.")
		return nil
	}
	// An empty kubeconfig path means in-cluster configuration.
	rc, err := clientcmd.BuildConfigFromFlags("", d.cfg.Kubeconfig)
	if err != nil {
		return fmt.Errorf("kubernetes client config: %w", err)
	}
	// One client serves every caller's reviews and impersonated calls: client-go's default of
	// 5 requests/s would queue callers behind each other.
	rc.QPS, rc.Burst = apiQPS, apiBurst
	ka, err := transcriptstore.NewKubeAuthorizerOn(rc, d.cfg.Clock)
	if err != nil {
		return err
	}
	ka.Audiences = d.cfg.Audiences
	ka.ChargeSARs(d.limits.Rates)
	objects, err := transcriptstore.WatchObjects(ctx, rc, d.hub, d.cfg.Front.Shard, d.log.WithName("events"))
	if err != nil {
		return err
	}
	d.rc, d.authz, d.objects = rc, ka, objects
	return nil
}

// openStore opens the store with its metrics, the events hub and the search index fed from
// its commits, and starts indexing.
func (d *deps) openStore() error {
	opts := append([]store.Option{store.WithMetrics(store.NewMetrics(d.reg)), store.WithLogger(d.log.WithName("store")),
		transcriptstore.PublishCommits(d.hub)}, d.index.StoreOptions()...)
	opts = append(opts, d.mem.StoreOptions()...)
	st, err := store.OpenFileStore(d.cfg.DataDir, opts...)
	if err != nil {
		return fmt.Errorf("open store %s: %w", d.cfg.DataDir, err)
	}
	d.store, d.closeStore = st, sync.OnceValue(st.Close)
	d.index.Start(st)
	d.mem.Start(st)
	for _, r := range st.Repairs() {
		d.log.Info("transcript tail repaired on open", "path", r.Path, "truncatedBytes", r.TruncatedBytes)
	}
	return nil
}

// listenPublic listens on cfg.Listen, with TLS unless --insecure-no-auth.
func (d *deps) listenPublic(ctx context.Context) (net.Listener, error) {
	ln, err := net.Listen("tcp", d.cfg.Listen)
	if err != nil || d.cfg.InsecureNoAuth {
		return ln, err
	}
	tlsCfg, err := transcriptstore.ServerTLS(ctx, d.cfg.TLSCertDir, d.log)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	return tls.NewListener(ln, tlsCfg), nil
}

// listenInternal listens on a unix socket (removing a stale one left by a killed process), or
// on TCP when addr is host:port.
func listenInternal(addr string) (net.Listener, error) {
	if isTCP(addr) {
		return net.Listen("tcp", addr)
	}
	if err := os.MkdirAll(filepath.Dir(addr), 0o770); err != nil {
		return nil, err
	}
	if err := os.Remove(addr); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	ln, err := net.Listen("unix", addr)
	if err != nil {
		return nil, err
	}
	// The manager container shares the directory; group access is enough.
	if err := os.Chmod(addr, 0o660); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}

func isTCP(addr string) bool { return !strings.Contains(addr, "/") && strings.Contains(addr, ":") }

// removeSocket closes the internal listener and removes its unix socket.
func (d *deps) removeSocket() {
	_ = d.internalLn.Close()
	if !isTCP(d.cfg.Socket) {
		_ = os.Remove(d.cfg.Socket)
	}
}
