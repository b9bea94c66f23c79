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

// Package sidecartest runs the real transcript-store sidecar for a test.
package sidecartest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"

	"github.com/agent-sessions/agent-session-operator/internal/transcript/server"
)

// Addrs are the sidecar's bound addresses: its internal API and its public listener.
type Addrs struct{ Internal, Public string }

// Start runs the sidecar with cfg until the test ends, on a fresh data directory, socket
// and loopback port unless cfg names them, and returns once both listeners are up.
func Start(t testing.TB, cfg server.SidecarConfig) Addrs {
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
	go func() { done <- server.RunSidecar(ctx, cfg) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-ready:
		return a
	case err := <-done:
		t.Fatal(err)
		return Addrs{}
	}
}
