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

// Command devcluster is `make run-local`: a local control plane with the CRDs, the manager and
// the transcript-store, and the samples, until Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
)

func main() {
	var o devcluster.Options
	flag.StringVar(&o.RepoRoot, "repo-root", ".", "repository root (holds config/)")
	flag.StringVar(&o.BinDir, "bin-dir", "bin", "directory holding the manager and transcript-store binaries")
	flag.StringVar(&o.StateDir, "state-dir", "", "kubeconfig, transcripts and sockets (default <repo-root>/.local/run-local)")
	flag.BoolVar(&o.NoManager, "no-manager", false, "start only the control plane with the CRDs")
	flag.BoolVar(&o.NoSamples, "no-samples", false, "do not apply config/samples")
	noEverything := flag.Bool("no-mcp-everything", false, "do not start the reference everything MCP server (hack/mcp-npm.sh installs it)")
	flag.Parse()
	o.MCPEverything = !*noEverything
	if o.StateDir == "" {
		o.StateDir = filepath.Join(o.RepoRoot, ".local", "run-local")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	began := time.Now()
	c, err := devcluster.Start(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "devcluster:", err)
		os.Exit(1)
	}
	fmt.Printf("devcluster: up in %s%s\n", time.Since(began).Round(time.Second), sinceRunLocal())
	fmt.Printf(`
agent-session-operator is running locally.

  kubeconfig:   %[1]s
  history API:  %[2]s/sessions/{sessionKey}/history (the local CA: %[3]s)
  console:      %[2]s/ (sign in with a token: kubectl create token NAME --audience agent-sessions)
  events:       %[2]s/events?namespace=default (SSE; kubectl sessions events)
  metrics:      https://%[4]s/metrics (a token allowed to get /metrics)
  environment:  %[5]s
  MCP tools:    %[7]s (the everything server, for Agents' spec.tools.mcpServers)
  session MCP:  %[8]s (the session tools, for agents outside; the local CA above)
  admin token:  %[9]s

In another terminal, from the repository root:

  source %[6]s
  kubectl get agent-sessions
  kubectl sessions list

Ctrl-C stops everything.
`, c.Kubeconfig, c.HistoryURL(), c.HistoryCAFile, c.MetricsAddr, c.EnvPath(), relToCwd(c.EnvPath()), orNone(c.EverythingURL),
		c.MCPURL("default"), c.Token)
	<-ctx.Done()
	fmt.Println("devcluster: stopping")
	c.Stop()
}

// relToCwd shortens path to one relative to the working directory when it lies below it.
func relToCwd(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

func orNone(s string) string {
	if s == "" {
		return "none (--no-mcp-everything)"
	}
	return s
}

// sinceRunLocal is ", N after make run-local started" when hack/run-local.sh says when it
// started (RUN_LOCAL_STARTED, unix seconds): the whole first run's time, builds included.
func sinceRunLocal() string {
	started, err := strconv.ParseInt(os.Getenv("RUN_LOCAL_STARTED"), 10, 64)
	if err != nil || started <= 0 {
		return ""
	}
	return fmt.Sprintf(", %s after make run-local started", time.Since(time.Unix(started, 0)).Round(time.Second))
}
