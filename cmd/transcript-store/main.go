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

// Command transcript-store is the sidecar that owns the transcript volume: an internal API for
// the manager on a unix socket and the public history API (JSON and SSE) over HTTP.
package main

import (
	"context"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/memtune"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecar"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func main() {
	var cfg transcriptstore.SidecarConfig
	flag.StringVar(&cfg.DataDir, "data-dir", "/var/lib/agent-sessions", "directory holding <namespace>/<sessionId>.jsonl transcripts")
	flag.StringVar(&cfg.Socket, "socket", "/run/agent-sessions/transcript.sock", "unix socket of the internal API (or 127.0.0.1:port)")
	flag.StringVar(&cfg.Listen, "listen", ":8090", "address of the public HTTP API, health and metrics")
	flag.StringVar(&cfg.DefaultNamespace, "default-namespace", "default", "namespace of history requests without ?namespace=")
	flag.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig for TokenReview/SubjectAccessReview (in-cluster config when empty)")
	flag.BoolVar(&cfg.InsecureNoAuth, "insecure-no-auth", false, "serve history without authentication and without TLS (local runs only)")
	flag.StringVar(&cfg.TLSCertDir, "tls-cert-dir", "", "directory holding tls.crt and tls.key of the public API (reloaded on change); empty means a self-signed certificate")
	audiences := flag.String("token-audiences", transcriptstore.DefaultAudience, "comma-separated audiences asked of history readers' tokens (TokenReview); empty accepts tokens for the API server")
	flag.IntVar(&cfg.MaxStreamsPerUser, "max-streams-per-user", transcriptstore.DefaultMaxStreamsPerUser,
		"streams one user may hold open at once: /events, history follows and /mcp GET streams together")
	flag.IntVar(&cfg.MaxMCPSessionsPerUser, "max-mcp-sessions-per-user", mcpserver.DefaultMaxSessionsPerUser,
		"MCP sessions one user may hold open at once on /mcp; the next initialize gets 429")
	flag.DurationVar(&cfg.MCPSessionIdleTimeout, "mcp-session-idle-timeout", mcpserver.DefaultSessionIdleTimeout,
		"an MCP session no request (nor open GET stream) has used for this long is closed")
	flag.Float64Var(&cfg.APIQPSPerUser, "api-qps-per-user", transcriptstore.DefaultAPIQPSPerUser,
		"API calls per second the store makes on one user's behalf (reviews, impersonated tool calls); over it the user gets 429; negative: no limit")
	flag.IntVar(&cfg.APIBurstPerUser, "api-burst-per-user", transcriptstore.DefaultAPIBurstPerUser, "burst of --api-qps-per-user")
	mcpHosts := flag.String("mcp-allowed-hosts", "", "comma-separated host names /mcp answers to besides localhost (DNS rebinding protection); empty checks only the Origin")
	flag.DurationVar(&cfg.ArchivedRetention, "archived-transcript-retention", transcriptstore.DefaultArchivedRetention,
		"how long archived transcripts (*.jsonl.deleted.<unix>) and retired sessions' records are kept before they are removed (looked at hourly, or every tenth of a shorter retention, at most once a minute); 0 keeps them forever")
	flag.Var(&cfg.Front.Shard, "shard", "This store's shard, i/n, as the manager's --shard: requests for namespaces of other shards go to their owner (--shard-url). Default 0/1: every namespace is this store's.")
	flag.StringVar(&cfg.Front.URLTemplate, "shard-url", "", "the owners' public address with {i} for the shard index, e.g. https://agent-session-operator-shard-{i}.agents-system.svc:8090, or the n addresses comma-separated (required with --shard n > 1)")
	flag.StringVar(&cfg.Front.CAFile, "shard-ca-file", "", "certificates the owners' serving certificate is checked against (empty: ca.crt, or else tls.crt, of --tls-cert-dir; the system's without one)")
	flag.StringVar(&cfg.Front.ServerName, "shard-server-name", "", "the name the owners' serving certificate is checked for (empty: the host of --shard-url)")
	flag.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 0, "how long SIGTERM waits for appends and streams to drain (default 20s)")
	signingKey := flag.String("a2a-card-signing-key", "", "PEM file of the private key (ECDSA P-256 or Ed25519) the A2A agent cards are signed with "+
		"(the chart mounts the Secret transcriptStore.a2aCardSigningSecret names); its public key is published at /a2a/.well-known/jwks.json. Empty: cards are unsigned.")
	pprofAddr := flag.String("pprof-bind-address", "0", "Address of the Go profiler's HTTP endpoints (/debug/pprof), as the manager's flag; 0 disables it.")
	flag.Parse()
	for _, a := range strings.Split(*audiences, ",") {
		if a = strings.TrimSpace(a); a != "" {
			cfg.Audiences = append(cfg.Audiences, a)
		}
	}

	for _, h := range strings.Split(*mcpHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.MCPAllowedHosts = append(cfg.MCPAllowedHosts, h)
		}
	}

	cfg.Log = logr.FromSlogHandler(slog.NewJSONHandler(os.Stderr, nil))
	ctrllog.SetLogger(cfg.Log) // controller-runtime's certwatcher logs through it
	if *signingKey != "" {
		key, err := os.ReadFile(*signingKey)
		if err != nil {
			cfg.Log.Error(err, "reading --a2a-card-signing-key")
			os.Exit(1)
		}
		cfg.A2ACardSigningKey = key
	}
	cfg.Log.Info("Go collector target", "gcPercent", memtune.Apply(), "memoryLimit", memtune.ApplyLimit())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := servePprof(ctx, *pprofAddr); err != nil {
		cfg.Log.Error(err, "profiler")
		os.Exit(1)
	}
	if err := sidecar.Run(ctx, cfg); err != nil {
		cfg.Log.Error(err, "transcript-store failed")
		os.Exit(1)
	}
}

// servePprof serves /debug/pprof on addr until ctx ends ("0" or empty: not at all). It is a
// listener of its own, off the public API, for loopback use as the manager's is.
func servePprof(ctx context.Context, addr string) error {
	if addr == "" || addr == "0" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return nil
}
