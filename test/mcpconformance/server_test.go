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

package mcpconformance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver/mcpservertest"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// serverScenarios are the suite's server scenarios that apply to /mcp: it offers tools and
// no logging, prompts or resources.
var serverScenarios = []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection"}

// TestServerConformance runs the server scenarios against the /mcp handler. The suite sends
// no credentials, so a proxy in front adds a bearer token and passes Host and Origin on
// unchanged: the endpoint's own authentication and rebinding checks are what is tested.
func TestServerConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("installs the conformance suite from the npm registry and runs Node")
	}
	pkgs, err := testenv.MCPNPM()
	if err != nil {
		t.Fatal(err)
	}
	endpoint, backend := mcpEndpoint(t)
	for _, sc := range serverScenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, pkgs.Node(), pkgs.Conformance(), "server", "--url", endpoint, "--scenario", sc)
			cmd.Dir = t.TempDir()
			b, err := cmd.CombinedOutput()
			out := string(b)
			if err != nil || !strings.Contains(out, " 0 failed") || strings.Contains(out, "FAILURE") {
				t.Fatalf("scenario %s: %v\n%s", sc, err, out)
			}
		})
	}
	// Without the proxy's token the endpoint refuses.
	resp, err := http.Post(backend+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", resp.StatusCode)
	}
}

// mcpEndpoint serves /mcp behind a proxy that adds a bearer token and passes Host and Origin
// on unchanged; it returns the proxied endpoint and the bare server's URL.
func mcpEndpoint(t *testing.T) (endpoint, backend string) {
	o, _ := mcpservertest.Options()
	// The suite opens a session per scenario and closes none; the default cap of one
	// user's sessions would refuse the later scenarios.
	o.Limits.MaxPerUser = 1024
	srv := httptest.NewServer(mcpserver.Handler(o))
	t.Cleanup(srv.Close)
	target, _ := url.Parse(srv.URL)
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer alice")
		},
		FlushInterval: -1,
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// In full duplex, as the shard front proxies (internal/transcriptstore/front.go): else
		// the proxy's server closes the request body when the response starts, the
		// transport's last read of it (past Content-Length, to see it end) fails when it
		// comes later, on a loaded machine, and the transport closes the connection with the
		// answer half copied: the suite saw a 200 without its JSON-RPC result.
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL + "/mcp?namespace=" + mcpservertest.Namespace, srv.URL
}
