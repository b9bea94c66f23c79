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

package mcpserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
)

// statelessPost sends one 2026-07-28 request: no session, the revision in the header.
func statelessPost(t *testing.T, url, token, body string) reply {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcpserver.StatelessRevision)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var b strings.Builder
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf) // a listen stream stays open: its first bytes are enough
	b.Write(buf[:n])
	return reply{code: resp.StatusCode, body: b.String()}
}

// The stateless revision opens no session, so the session cap does not hold it back; the
// user's API rate and stream cap still do.
func TestStatelessRevisionBounds(t *testing.T) {
	rates := userlimits.NewRates(1, 1, clocktesting.NewFakePassiveClock(time.Now()))
	streams := userlimits.NewStreams(1)
	url := limitedEndpoint(t, mcpserver.SessionLimits{MaxPerUser: 1, Rates: rates, Streams: streams,
		Clock: clocktesting.NewFakeClock(time.Now())})

	for i := range 2 { // beyond the session cap of 1
		cs, err := connectRevision(t, url, "bob", mcpserver.StatelessRevision)
		if err != nil {
			t.Fatalf("bob's client %d: %v", i, err)
		}
		defer func() { _ = cs.Close() }()
	}

	held, ok := streams.Acquire("bob") // bob's /events stream takes his one stream
	if !ok {
		t.Fatal("no stream for bob")
	}
	defer held()
	if got := statelessPost(t, url, "bob", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`); got.code != http.StatusTooManyRequests ||
		!strings.Contains(got.body, "--max-streams-per-user") {
		t.Fatalf("bob's listen stream over his stream cap: %d %s, want 429 naming --max-streams-per-user", got.code, got.body)
	}

	if err := rates.Take("alice"); err != nil { // the one call of her burst, made for her
		t.Fatal(err)
	}
	if got := statelessPost(t, url, "alice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`); got.code != http.StatusTooManyRequests ||
		!strings.Contains(got.body, "--api-qps-per-user") {
		t.Fatalf("alice over her rate: %d %s, want 429 naming --api-qps-per-user", got.code, got.body)
	}
	if got := statelessPost(t, url, "nobody", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`); got.code != http.StatusUnauthorized {
		t.Fatalf("an unknown token: %d %s, want 401", got.code, got.body)
	}
}

// The stateless revision's servers are kept per namespace: a call naming another namespace
// acts there, not in the namespace an earlier request named.
func TestStatelessServersPerNamespace(t *testing.T) {
	srv, fc := endpoint(t)
	for _, namespace := range []string{ns, "elsewhere", ns} {
		cs, err := connectRevision(t, srv.URL+"/mcp?namespace="+namespace, "alice", mcpserver.StatelessRevision)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sessions_send",
			Arguments: map[string]any{"sessionKey": "main", "message": "hello", "timeoutSeconds": 0}}); err != nil {
			t.Fatal(err)
		}
		_ = cs.Close()
	}
	var sends sessionsv1alpha1.SessionSendList
	if err := fc.List(t.Context(), &sends, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(sends.Items) != 2 {
		t.Errorf("%d sends in %s, want 2 (the call in another namespace acts there)", len(sends.Items), ns)
	}
}
