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

// Package sidecartest runs the real transcript-store sidecar, or its internal API alone, for a test.
package sidecartest

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecar"
)

// Addrs are the sidecar's bound addresses: its internal API and its public listener.
type Addrs struct{ Internal, Public string }

// TB is what Start needs of a test: a testing.TB, or a Ginkgo suite's GinkgoT().
type TB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Fatal(args ...any)
}

// Start runs the sidecar with cfg until the test ends, on a fresh data directory, socket
// and loopback port unless cfg names them, and returns once both listeners are up.
func Start(t TB, cfg transcriptstore.SidecarConfig) Addrs {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Socket == "" {
		cfg.Socket = filepath.Join(t.TempDir(), "s.sock")
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Log.GetSink() == nil {
		cfg.Log = logr.Discard()
	}
	ready := make(chan Addrs, 1)
	cfg.Ready = func(s, l string) { ready <- Addrs{s, l} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sidecar.Run(ctx, cfg) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-ready:
		return a
	case err := <-done:
		t.Fatal(err)
		return Addrs{}
	}
}

// StartAPI serves the internal API for st on a unix socket and returns a client for it.
func StartAPI(t testing.TB, st transcript.Store) *client.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "t.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv := &http.Server{Handler: transcriptstore.NewAPIHandler(st, nil, nil)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return client.NewClient(sock)
}
