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
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver/mcpservertest"
	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
)

// waitFor is how long a test waits for something a goroutine does.
const waitFor = 30 * time.Second

func limitedEndpoint(t *testing.T, lim mcpserver.SessionLimits) string {
	o, _ := mcpservertest.Options()
	o.Limits = lim
	srv := httptest.NewServer(mcpserver.Handler(o))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp?namespace=" + ns
}

// mcpRequest sends one JSON-RPC message (or, with an empty body, a GET stream request) and
// returns the status, the session id answered and the body; a GET's body is left open in
// stream.
type reply struct {
	code    int
	session string
	body    string
	stream  io.ReadCloser
}

func mcpRequest(t *testing.T, ctx context.Context, method, url, token, session, body string) reply {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := reply{code: resp.StatusCode, session: resp.Header.Get("Mcp-Session-Id")}
	if method == http.MethodGet && resp.StatusCode == http.StatusOK {
		r.stream = resp.Body
		return r
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	r.body = string(b)
	return r
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
	`"capabilities":{},"clientInfo":{"name":"test","version":"v0"}}}`

func initialize(t *testing.T, url, token string) reply {
	t.Helper()
	return mcpRequest(t, t.Context(), http.MethodPost, url, token, "", initializeBody)
}

func ping(t *testing.T, url, token, session string) reply {
	t.Helper()
	return mcpRequest(t, t.Context(), http.MethodPost, url, token, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
}

// eventually polls cond until it holds or waitFor passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitFor); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, waitFor)
		}
	}
}

// One user's sessions beyond the cap are refused with 429 naming the flag in a JSON-RPC
// error; another user still gets in; a closed session frees its
// slot; a session id works only for the user who opened it.
func TestMCPSessionsPerUser(t *testing.T) {
	url := limitedEndpoint(t, mcpserver.SessionLimits{MaxPerUser: 2, Clock: clocktesting.NewFakeClock(time.Now())})
	a1, a2 := initialize(t, url, "alice"), initialize(t, url, "alice")
	if a1.code != http.StatusOK || a2.code != http.StatusOK || a1.session == "" || a1.session == a2.session {
		t.Fatalf("alice's sessions within the cap: %+v %+v", a1, a2)
	}
	a3 := initialize(t, url, "alice")
	if a3.code != http.StatusTooManyRequests || !strings.Contains(a3.body, "--max-mcp-sessions-per-user") || !strings.Contains(a3.body, `"jsonrpc":"2.0"`) {
		t.Fatalf("alice's third session: %d %s, want 429 with a JSON-RPC error naming the flag", a3.code, a3.body)
	}
	// The SDK's client reads a 429 as transient and shows only its status text. The cap is
	// on sessions, which only the revisions before the stateless one open.
	if _, err := connectRevision(t, url, "alice", "2025-11-25"); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Fatalf("the SDK client over the cap: %v, want Too Many Requests", err)
	}
	if b := initialize(t, url, "bob"); b.code != http.StatusOK {
		t.Fatalf("bob refused for alice's sessions: %d %s", b.code, b.body)
	}
	if got := ping(t, url, "bob", a1.session); got.code != http.StatusNotFound {
		t.Fatalf("bob using alice's session: %d, want 404", got.code)
	}
	if got := ping(t, url, "alice", a1.session); got.code != http.StatusOK {
		t.Fatalf("alice using her session: %d %s", got.code, got.body)
	}
	if del := mcpRequest(t, t.Context(), http.MethodDelete, url, "alice", a1.session, ""); del.code != http.StatusNoContent {
		t.Fatalf("closing a session: %d", del.code)
	}
	if a4 := initialize(t, url, "alice"); a4.code != http.StatusOK {
		t.Fatalf("alice after closing one: %d %s", a4.code, a4.body)
	}
	// A first message that is not an initialize opens no session and holds no slot.
	for range 3 {
		if got := ping(t, url, "bob", ""); got.code == http.StatusTooManyRequests {
			t.Fatalf("bob's stray pings took his slots: %s", got.body)
		}
	}
}

// A session no request uses for the idle timeout is closed and frees its slot; a use
// restarts the wait.
func TestMCPIdleSessionExpires(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	url := limitedEndpoint(t, mcpserver.SessionLimits{MaxPerUser: 1, IdleTimeout: 10 * time.Minute, Clock: clk})
	a1 := initialize(t, url, "alice")
	if a1.code != http.StatusOK {
		t.Fatalf("alice's session: %d %s", a1.code, a1.body)
	}
	clk.Step(9 * time.Minute)
	if got := ping(t, url, "alice", a1.session); got.code != http.StatusOK {
		t.Fatalf("a session used within the timeout: %d", got.code)
	}
	clk.Step(9 * time.Minute) // 18m after opening, 9m after its last use
	if got := initialize(t, url, "alice"); got.code != http.StatusTooManyRequests {
		t.Fatalf("a second session while the first is in use: %d, want 429", got.code)
	}
	clk.Step(time.Minute)
	var a2 reply
	eventually(t, "the idle session's slot freed", func() bool {
		a2 = initialize(t, url, "alice")
		return a2.code == http.StatusOK
	})
	if got := ping(t, url, "alice", a1.session); got.code != http.StatusNotFound {
		t.Fatalf("the expired session answered %d, want 404", got.code)
	}
}

// An MCP GET stream takes one of the user's streams, counted together with the others
// (/events, history) the shared Streams holds.
func TestMCPGetStreamsCountWithTheUsersOtherStreams(t *testing.T) {
	streams := userlimits.NewStreams(2)
	url := limitedEndpoint(t, mcpserver.SessionLimits{Streams: streams, Clock: clocktesting.NewFakeClock(time.Now())})
	events, ok := streams.Acquire("alice") // alice's /events stream
	if !ok {
		t.Fatal("no stream for alice")
	}
	defer events()
	s1, s2 := initialize(t, url, "alice"), initialize(t, url, "alice")
	ctx, cancel := context.WithCancel(t.Context())
	get1 := mcpRequest(t, ctx, http.MethodGet, url, "alice", s1.session, "")
	if get1.code != http.StatusOK {
		t.Fatalf("alice's MCP GET stream beside her /events: %d %s", get1.code, get1.body)
	}
	get2 := mcpRequest(t, t.Context(), http.MethodGet, url, "alice", s2.session, "")
	if get2.code != http.StatusTooManyRequests || !strings.Contains(get2.body, "--max-streams-per-user") {
		t.Fatalf("alice's third stream: %d %s, want 429 naming --max-streams-per-user", get2.code, get2.body)
	}
	if _, ok := streams.Acquire("alice"); ok {
		t.Fatal("an /events or history stream admitted beside the MCP GET over the cap")
	}
	b := initialize(t, url, "bob")
	if got := mcpRequest(t, t.Context(), http.MethodGet, url, "bob", b.session, ""); got.code != http.StatusOK {
		t.Fatalf("bob's stream: %d", got.code)
	} else {
		defer func() { _ = got.stream.Close() }()
	}
	cancel()
	_ = get1.stream.Close()
	eventually(t, "alice's stream freed when her GET ended", func() bool {
		r, ok := streams.Acquire("alice")
		if ok {
			r()
		}
		return ok
	})
}

// A POST from a user whose API rate is spent is refused with 429 before any tool runs;
// another user is not.
func TestMCPRefusesAUserOverTheirAPIRate(t *testing.T) {
	rates := userlimits.NewRates(1, 1, clocktesting.NewFakePassiveClock(time.Now()))
	url := limitedEndpoint(t, mcpserver.SessionLimits{Rates: rates, Clock: clocktesting.NewFakeClock(time.Now())})
	a := initialize(t, url, "alice")
	if err := rates.Take("alice"); err != nil { // the one call of her burst, made for her
		t.Fatal(err)
	}
	if got := ping(t, url, "alice", a.session); got.code != http.StatusTooManyRequests || !strings.Contains(got.body, "--api-qps-per-user") {
		t.Fatalf("alice over her rate: %d %s, want 429 naming --api-qps-per-user", got.code, got.body)
	}
	b := initialize(t, url, "bob")
	if got := ping(t, url, "bob", b.session); got.code != http.StatusOK {
		t.Fatalf("bob refused for alice's rate: %d %s", got.code, got.body)
	}
}

// 8,000 initializes from one token leave the endpoint holding the cap's sessions, not
// 8,000; the heap it logs is the figure of the finding (no assertion on it).
func TestMCPInitializeFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("8,000 requests")
	}
	const flood, workers = 8000, 8
	url := limitedEndpoint(t, mcpserver.SessionLimits{Clock: clocktesting.NewFakeClock(time.Now())})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < flood; i += workers {
				c := initialize(t, url, "alice").code
				mu.Lock()
				codes[c]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	after := heap()
	t.Logf("initialize flood: %d calls from one token, answers %v, heap in use %.1f MiB before, %.1f MiB after",
		flood, codes, float64(before)/(1<<20), float64(after)/(1<<20))
	if codes[http.StatusOK] != mcpserver.DefaultMaxSessionsPerUser {
		t.Fatalf("sessions opened: %d, want the cap %d", codes[http.StatusOK], mcpserver.DefaultMaxSessionsPerUser)
	}
	if b := initialize(t, url, "bob"); b.code != http.StatusOK {
		t.Fatalf("bob after alice's flood: %d", b.code)
	}
}
