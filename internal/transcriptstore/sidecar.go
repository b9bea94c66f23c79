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

package transcriptstore

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
	"sync/atomic"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/a2aserver"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
	"github.com/agent-sessions/agent-session-operator/internal/console"
	"github.com/agent-sessions/agent-session-operator/internal/console/actions"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SidecarConfig is the transcript-store process configuration (its flags).
type SidecarConfig struct {
	DataDir          string
	Socket           string // unix socket path, or host:port on loopback
	Listen           string
	DefaultNamespace string
	Kubeconfig       string
	InsecureNoAuth   bool
	// TLSCertDir holds tls.crt and tls.key of the public listener; empty means a
	// self-signed certificate. With InsecureNoAuth the listener is plain HTTP.
	TLSCertDir string
	// Audiences are asked of history readers' tokens (TokenReview); empty means the API
	// server's own.
	Audiences []string
	// MaxStreamsPerUser bounds one user's open streams, /events, history and /mcp GET
	// together (0: DefaultMaxStreamsPerUser).
	MaxStreamsPerUser int
	// MaxMCPSessionsPerUser bounds one user's open MCP sessions, and MCPSessionIdleTimeout
	// closes one unused for that long (0: mcpserver's defaults).
	MaxMCPSessionsPerUser int
	MCPSessionIdleTimeout time.Duration
	// APIQPSPerUser and APIBurstPerUser are each user's share of the store's API calls made
	// on their behalf (0: DefaultAPIQPSPerUser, DefaultAPIBurstPerUser; a negative QPS: no
	// limit).
	APIQPSPerUser   float64
	APIBurstPerUser int
	// MCPAllowedHosts are the host names /mcp answers to besides localhost (DNS rebinding
	// protection); empty checks only the Origin.
	MCPAllowedHosts []string
	// ArchivedRetention is how long archived transcripts are kept; 0 keeps them forever.
	ArchivedRetention time.Duration
	// A2ACardSigningKey is the PEM private key (ECDSA P-256 or Ed25519) the agent cards are
	// signed with, its public half published at /a2a/.well-known/jwks.json; nil serves
	// them unsigned.
	A2ACardSigningKey []byte
	// Front passes requests for other shards' namespaces to their owner (an unsharded
	// install answers everything itself).
	Front FrontConfig
	// Clock drives the retention loop, the per-user rates and MCP idle expiry; nil is the
	// real clock.
	Clock           clock.WithTickerAndDelayedExecution
	ShutdownTimeout time.Duration
	Log             logr.Logger
	// Ready, when set, receives the bound addresses once both listeners are up.
	Ready func(socketAddr, listenAddr string)
}

// RunSidecar serves the internal API and the public HTTP API until ctx is done, then drains:
// the internal API stops accepting and finishes in-flight appends, the store waits for the
// last fsync and ends follower streams, and the public server closes.
// The sidecar's API client rate (the manager's are flags; the sidecar's work is bounded by
// its callers' stream caps and the webhook's create rate).
const (
	apiQPS   = 100
	apiBurst = 200
)

// RunSidecar serves the transcript store's internal and public APIs until ctx ends, then
// drains appends and shuts both down.
func RunSidecar(ctx context.Context, cfg SidecarConfig) error {
	log := cfg.Log
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 20 * time.Second
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := store.NewMetrics(reg)

	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	limits := newUserLimits(cfg)
	hub := newEventHub()
	var authz Authorizer
	var kubeAuthz *KubeAuthorizer
	var rc *rest.Config
	var objects client.Reader
	if cfg.InsecureNoAuth {
		log.Info("WARNING: --insecure-no-auth is set: the history API serves every transcript to anyone who can reach " +
			cfg.Listen + ". Use this for local runs only, never in a cluster.")
	} else {
		// An empty kubeconfig path means in-cluster configuration.
		var err error
		rc, err = clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
		if err != nil {
			return fmt.Errorf("kubernetes client config: %w", err)
		}
		// One client serves every caller's reviews and impersonated calls: client-go's
		// default of 5 requests/s would queue callers behind each other.
		rc.QPS, rc.Burst = apiQPS, apiBurst
		ka, err := newKubeAuthorizer(rc, cfg.Clock)
		if err != nil {
			return err
		}
		ka.Audiences = cfg.Audiences
		ka.ChargeSARs(limits.rates)
		if objects, err = WatchObjects(ctx, rc, hub, cfg.Front.Shard, log.WithName("events")); err != nil {
			return err
		}
		authz, kubeAuthz = ka, ka
	}

	index, err := openSearchIndex(cfg.DataDir, log.WithName("search"))
	if err != nil {
		return err
	}
	defer func() { _ = index.Close() }()
	storeOpts := append([]store.Option{store.WithMetrics(metrics), store.WithLogger(log.WithName("store")), PublishCommits(hub)},
		index.StoreOptions()...)
	store, err := store.OpenFileStore(cfg.DataDir, storeOpts...)
	if err != nil {
		return fmt.Errorf("open store %s: %w", cfg.DataDir, err)
	}
	index.Start(store)
	for _, r := range store.Repairs() {
		log.Info("transcript tail repaired on open", "path", r.Path, "truncatedBytes", r.TruncatedBytes)
	}

	internalLn, err := listenInternal(cfg.Socket)
	if err != nil {
		_ = store.Close()
		return err
	}
	publicLn, err := net.Listen("tcp", cfg.Listen)
	if err == nil && !cfg.InsecureNoAuth {
		var tlsCfg *tls.Config
		if tlsCfg, err = serverTLS(ctx, cfg.TLSCertDir, log); err == nil {
			publicLn = tls.NewListener(publicLn, tlsCfg)
		} else {
			_ = publicLn.Close()
		}
	}
	if err != nil {
		_ = internalLn.Close()
		_ = store.Close()
		return err
	}

	var ready atomic.Bool
	eventsHandler := NewEventsHandler(hub, authz, store, objects, cfg.DefaultNamespace, log.WithName("events"))
	// The hooks the store serves, with their signing secrets, as the manager hands them.
	keyring := NewHookKeyring()
	routes := map[string]http.Handler{
		"/sessions/": NewHistoryHandler(HistoryOptions{
			Source: store, Authorizer: authz, DefaultNamespace: cfg.DefaultNamespace, Log: log.WithName("history"),
			MaxStreamsPerUser: cfg.MaxStreamsPerUser, Streams: limits.streams,
		}),
		"/search": NewSearchHandler(SearchOptions{Index: index, Sessions: objects, Authorizer: authz,
			DefaultNamespace: cfg.DefaultNamespace, Log: log.WithName("search")}),
		"/events": eventsHandler,
		// A stream's subscriptions (POST /events/{streamId}/subscriptions): the same handler,
		// which holds the open streams, not counted as a stream.
		"/events/":  eventsHandler,
		"/":         console.Handler(),
		"/mcp":      noCallerAPI(),
		"/console/": noCallerAPI(),
		"/a2a/":     noCallerAPI(),
		HooksRoute:  noCallerAPI(),
		"/healthz":  http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }),
		"/readyz": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if !ready.Load() {
				http.Error(w, "not ready", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("ok"))
		}),
		"/metrics": metricsAuth(kubeAuthz, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})),
	}
	if kubeAuthz != nil {
		routes["/events"] = LimitStreams(routes["/events"], kubeAuthz.Identify, limits.streams)
		var o mcpserver.Options
		if o, err = callerOptions(rc, cfg, kubeAuthz, searchable{store, index}, objects, limits); err == nil {
			routes["/mcp"], routes["/console/"] = mcpserver.Handler(o), actions.Handler(o)
			// Each A2A request may wait for its task or stream it: it counts as a stream.
			var signer *a2aserver.CardSigner
			if signer, err = cardSigner(cfg.A2ACardSigningKey); err == nil {
				routes["/a2a/"] = LimitStreams(a2aserver.Handler(a2aserver.Options{Callers: o, Hub: hub, Signer: signer}),
					kubeAuthz.Identify, limits.streams)
			}
		}
		var hooks client.Client
		if err == nil {
			if hooks, err = client.New(rc, client.Options{Scheme: scheme.New()}); err == nil {
				routes[HooksRoute] = NewHookHandler(HookOptions{Keys: keyring, Client: hooks, Clock: cfg.Clock, Registry: reg, Log: log.WithName("hooks")})
			}
		}
	}
	var front *owners
	if err == nil {
		front, err = newOwners(cfg.Front, cfg.TLSCertDir, log.WithName("front"))
	}
	if err == nil {
		frontDoors(routes, front, cfg.DefaultNamespace)
	}
	var mux *http.ServeMux
	if err == nil {
		mux, err = publicMux(routes)
	}
	if err != nil {
		_ = internalLn.Close()
		_ = publicLn.Close()
		_ = store.Close()
		return err
	}

	internalAPI := http.NewServeMux()
	internalAPI.Handle("/", NewAPIHandler(store, index, hub))
	internalAPI.Handle("PUT "+transcript.APIHookKeysPath, hookKeysHandler(keyring))
	internalAPI.Handle("GET "+transcript.APIHookDeliveriesPath, hookDeliveriesHandler(keyring))
	internalAPI.Handle("POST "+transcript.APIHookDeliveriesPath, hookDeliveriesHandler(keyring))
	internalSrv := &http.Server{Handler: internalAPI, ReadHeaderTimeout: 10 * time.Second}
	// No WriteTimeout on the public server: SSE streams are long-lived and set per-write deadlines.
	publicSrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	pruneCtx, stopPrune := context.WithCancel(ctx)
	defer stopPrune()
	go pruneArchived(pruneCtx, store, cfg.ArchivedRetention, cfg.Clock, log.WithName("retention"))

	errc := make(chan error, 2)
	go func() { errc <- serve(internalSrv, internalLn) }()
	go func() { errc <- serve(publicSrv, publicLn) }()
	ready.Store(true)
	log.Info("transcript-store serving", "dataDir", cfg.DataDir, "socket", internalLn.Addr().String(), "listen", publicLn.Addr().String())
	if cfg.Ready != nil {
		cfg.Ready(internalLn.Addr().String(), publicLn.Addr().String())
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	ready.Store(false)
	log.Info("shutting down: draining appends")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := internalSrv.Shutdown(sctx); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("internal API shutdown: %w", err))
	}
	_ = store.Close() // waits for pending appends, ends SSE streams
	if err := publicSrv.Shutdown(sctx); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("public API shutdown: %w", err))
	}
	if strings.HasPrefix(internalLn.Addr().Network(), "unix") {
		_ = os.Remove(cfg.Socket)
	}
	log.Info("transcript-store stopped")
	return runErr
}

func serve(srv *http.Server, ln net.Listener) error {
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// listenInternal listens on a unix socket (removing a stale one left by a killed process), or
// on TCP when addr is host:port.
func listenInternal(addr string) (net.Listener, error) {
	if !strings.Contains(addr, "/") && strings.Contains(addr, ":") {
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

// metricsAuth lets through only callers whose token may get /metrics (TokenReview +
// SubjectAccessReview, as the manager's metrics filter); nil a (--insecure-no-auth) lets
// everyone through.
func metricsAuth(a *KubeAuthorizer, next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, _ := bearerToken(r)
		_, err := a.AuthorizeMetrics(r.Context(), token)
		switch {
		case err == nil:
			next.ServeHTTP(w, r)
		case errors.Is(err, ErrUnauthenticated):
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		case errors.Is(err, ErrForbidden):
			http.Error(w, "Forbidden", http.StatusForbidden)
		default:
			http.Error(w, "authorization check failed", http.StatusServiceUnavailable)
		}
	})
}

// cardSigner is the signer of the agent cards with the PEM key; none without one.
func cardSigner(pemKey []byte) (*a2aserver.CardSigner, error) {
	if len(pemKey) == 0 {
		return nil, nil
	}
	key, err := a2atools.ParseSigningKey(pemKey)
	if err != nil {
		return nil, err
	}
	return a2aserver.NewCardSigner(key), nil
}
