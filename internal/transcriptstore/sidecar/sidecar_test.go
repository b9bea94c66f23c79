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
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// The door table builds exactly the routes transcriptstore declares: a declared door without
// a row would go unserved, and PublicMux refuses a row that is not declared.
func TestEveryDeclaredRouteHasARow(t *testing.T) {
	var rows []string
	for _, d := range doors {
		rows = append(rows, d.route)
	}
	declared := transcriptstore.PublicRoutes()
	if diff := cmp.Diff(slices.Sorted(slices.Values(declared)), slices.Sorted(slices.Values(rows))); diff != "" {
		t.Errorf("door table against the declared routes (-declared +rows):\n%s", diff)
	}
}

// A start that fails half way (the public address cannot be bound) undoes what it built: the
// internal socket is gone and the data directory opens again at once.
func TestFailedStartCleansUp(t *testing.T) {
	dir := t.TempDir()
	cfg := transcriptstore.SidecarConfig{DataDir: filepath.Join(dir, "data"), Socket: filepath.Join(dir, "run", "t.sock"),
		InsecureNoAuth: true, DefaultNamespace: "ns", Log: logr.Discard()}

	bad := cfg
	bad.Listen = "127.0.0.1:-1"
	if err := Run(t.Context(), bad); err == nil {
		t.Fatal("Run with an unusable listen address returned nil")
	}
	if _, err := os.Stat(cfg.Socket); !os.IsNotExist(err) {
		t.Errorf("socket %s left behind after a failed start (stat: %v)", cfg.Socket, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cfg.Listen = "127.0.0.1:0"
	answers := map[string]int{}
	cfg.Ready = func(_, listen string) {
		defer cancel()
		for _, path := range []string{"/healthz", "/readyz", "/mcp"} {
			resp, err := http.Get("http://" + listen + path)
			if err != nil {
				t.Errorf("GET %s: %v", path, err)
				continue
			}
			_ = resp.Body.Close()
			answers[path] = resp.StatusCode
		}
	}
	if err := Run(ctx, cfg); err != nil {
		t.Fatalf("Run after the failed start: %v", err)
	}
	want := map[string]int{"/healthz": http.StatusOK, "/readyz": http.StatusOK, "/mcp": http.StatusNotImplemented}
	if diff := cmp.Diff(want, answers); diff != "" {
		t.Errorf("answers of the second start (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(cfg.Socket); !os.IsNotExist(err) {
		t.Errorf("socket %s left behind after a clean stop (stat: %v)", cfg.Socket, err)
	}
}
