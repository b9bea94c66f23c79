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

package mcptools

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestResolveAndCall(t *testing.T) {
	for name, sse := range map[string]bool{"streamable HTTP": false, "HTTP+SSE fallback": true} {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, sse)
			p := newTestPool(t, Options{})
			set := p.Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "everything", URL: ts.URL}))

			wantNames := []string{"mcp__everything__add", "mcp__everything__echo", "mcp__everything__fail",
				ToolName("everything", "files.read/v2"), "mcp__everything__slow"}
			if d := cmp.Diff(wantNames, toolNames(set)); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]sessionsv1alpha1.MCPServerStatus{{Name: "everything", Connected: true, Tools: 5}}, set.Status()); d != "" {
				t.Errorf("status (-want +got):\n%s", d)
			}
			for _, tl := range set.Tools() {
				if tl.Remote == "echo" && !strings.Contains(string(tl.Schema), `"text"`) {
					t.Errorf("echo schema %s lacks the server's text property", tl.Schema)
				}
			}

			calls := map[string]struct {
				tool, args string
				want       Result
			}{
				"text":       {"mcp__everything__echo", `{"text":"hi"}`, Result{Text: "Echo: hi"}},
				"structured": {"mcp__everything__add", `{"a":2,"b":3}`, Result{Text: `{"sum":5}`}},
				"isError":    {"mcp__everything__fail", `{}`, Result{Text: "disk on fire", IsError: true}},
				"mangled":    {ToolName("everything", "files.read/v2"), `null`, Result{Text: "read"}},
				"bad args":   {"mcp__everything__echo", `[1]`, Result{IsError: true}},
				"unknown":    {"mcp__everything__nope", `{}`, Result{Text: `unknown tool "mcp__everything__nope"`, IsError: true}},
			}
			for cname, c := range calls {
				got := set.Call(t.Context(), c.tool, []byte(c.args))
				if c.want.Text == "" {
					got.Text = ""
				}
				if d := cmp.Diff(c.want, got); d != "" {
					t.Errorf("%s: result (-want +got):\n%s", cname, d)
				}
			}
		})
	}
}

func TestAllowedTools(t *testing.T) {
	ts := newTestServer(t, false)
	p := newTestPool(t, Options{})
	set := p.Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL, AllowedTools: []string{"echo", "missing"}}))
	if d := cmp.Diff([]string{"mcp__s__echo"}, toolNames(set)); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if got := set.Call(t.Context(), "mcp__s__add", []byte(`{"a":1,"b":1}`)); !got.IsError {
		t.Errorf("a tool outside allowedTools was called: %+v", got)
	}
}

func TestCallTimeoutEndsTheCallNotTheSession(t *testing.T) {
	ts := newTestServer(t, false)
	p := newTestPool(t, Options{})
	set := p.Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL, TimeoutSeconds: seconds(2)}))
	got := set.Call(t.Context(), "mcp__s__slow", nil)
	if !got.IsError || !strings.Contains(got.Text, "did not answer slow within 2s") {
		t.Fatalf("slow call: %+v, want a timeout error result", got)
	}
	if got := set.Call(t.Context(), "mcp__s__echo", []byte(`{"text":"still here"}`)); got != (Result{Text: "Echo: still here"}) {
		t.Errorf("call after a timeout: %+v", got)
	}
}

func TestServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	ts := newTestServer(t, false)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	dials := &countingTransport{base: http.DefaultTransport, host: ln.Addr().String()}
	p := newTestPool(t, Options{Clock: clk, Transport: dials})
	agent := testAgent(1, sessionsv1alpha1.MCPServer{Name: "down", URL: down, TimeoutSeconds: seconds(2)}, sessionsv1alpha1.MCPServer{Name: "up", URL: ts.URL, AllowedTools: []string{"echo"}})

	set := p.Resolve(t.Context(), agent)
	if d := cmp.Diff([]string{"mcp__up__echo"}, toolNames(set)); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	st := set.Status()
	if len(st) != 2 || st[0].Connected || st[0].Message == "" || !st[1].Connected || st[1].Tools != 1 {
		t.Errorf("status %+v: want down not connected with a message, up connected with 1 tool", st)
	}
	// The back-off starts at RetryAfter and doubles with each failure in a row.
	for i, step := range []struct {
		advance time.Duration
		redial  bool
	}{
		{0, false}, {RetryAfter - time.Second, false}, {time.Second, true},
		{RetryAfter, false}, {RetryAfter, true}, {3 * RetryAfter, false}, {RetryAfter, true},
	} {
		clk.SetTime(clk.Now().Add(step.advance))
		before := dials.count()
		if got := p.Resolve(t.Context(), agent).Status()[0]; got.Connected || got.Message == "" {
			t.Errorf("step %d: down server %+v", i, got)
		}
		if redialled := dials.count() > before; redialled != step.redial {
			t.Errorf("step %d: redialled %v, want %v", i, redialled, step.redial)
		}
	}
	if got := redialAfter(100); got != MaxRetryAfter {
		t.Errorf("back-off after 100 failures %s, want the bound %s", got, MaxRetryAfter)
	}
}

// countingTransport counts the requests to one host.
type countingTransport struct {
	base http.RoundTripper
	host string
	mu   sync.Mutex
	n    int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == c.host {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
	return c.base.RoundTrip(r)
}

func (c *countingTransport) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func TestServerRestartsOrDiesAfterListing(t *testing.T) {
	ts := newTestServer(t, false)
	p := newTestPool(t, Options{})
	agent := testAgent(1, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL, TimeoutSeconds: seconds(2)})
	set := p.Resolve(t.Context(), agent)
	if !set.Has("mcp__s__echo") {
		t.Fatalf("tools %v", toolNames(set))
	}
	// A restarted server no longer knows the session: at most one call fails (with an error
	// result), then the client connects again.
	ts.Restart()
	got := set.Call(t.Context(), "mcp__s__echo", []byte(`{"text":"x"}`))
	if got.IsError {
		got = set.Call(t.Context(), "mcp__s__echo", []byte(`{"text":"x"}`))
	}
	if got != (Result{Text: "Echo: x"}) {
		t.Errorf("call after the server restarted: %+v", got)
	}
	// A server that is gone: an error result, the tool list stays cached.
	ts.Close()
	if got := set.Call(t.Context(), "mcp__s__echo", []byte(`{"text":"x"}`)); !got.IsError || got.Text == "" {
		t.Errorf("call to a closed server: %+v, want an error result", got)
	}
	if !p.Resolve(t.Context(), agent).Has("mcp__s__echo") {
		t.Errorf("the cached tool list was lost with the server")
	}
}

func TestListChangedRefreshesTheCache(t *testing.T) {
	ts := newTestServer(t, false)
	p := newTestPool(t, Options{})
	agent := testAgent(1, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL})
	if set := p.Resolve(t.Context(), agent); set.Has("mcp__s__late") {
		t.Fatal("late tool before it was added")
	}
	mcp.AddTool(ts.Server, &mcp.Tool{Name: "late"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "here"}}}, nil, nil
		})
	deadline := time.Now().Add(30 * time.Second)
	for {
		set := p.Resolve(t.Context(), agent)
		if set.Has("mcp__s__late") {
			if got := set.Call(t.Context(), "mcp__s__late", nil); got != (Result{Text: "here"}) {
				t.Errorf("late tool: %+v", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools/list_changed did not refresh the list: %v", toolNames(set))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// RemoveTools announces the change too.
	ts.RemoveTools("late")
	deadline = time.Now().Add(30 * time.Second)
	for p.Resolve(t.Context(), agent).Has("mcp__s__late") {
		if time.Now().After(deadline) {
			t.Fatal("removed tool still offered")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHeadersFromSecrets(t *testing.T) {
	ts := newTestServer(t, false)
	secrets := map[string]string{"tok/header": "Bearer s3cret"}
	var asked []string
	read := func(_ context.Context, agent *sessionsv1alpha1.Agent, ref *corev1.SecretKeySelector) ([]byte, error) {
		asked = append(asked, agent.Namespace+"/"+ref.Name)
		v, ok := secrets[ref.Name+"/"+ref.Key]
		if !ok {
			return nil, errors.New("not allowed")
		}
		return []byte(v), nil
	}
	p := newTestPool(t, Options{ReadSecret: read})
	hdr := func(secret string) sessionsv1alpha1.MCPHeader {
		return sessionsv1alpha1.MCPHeader{Name: "Authorization", ValueFrom: sessionsv1alpha1.MCPHeaderSource{SecretKeyRef: corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "header"}}}
	}
	set := p.Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL, Headers: []sessionsv1alpha1.MCPHeader{hdr("tok")}}))
	if !set.Has("mcp__s__echo") || !ts.SawHeader("Authorization", "Bearer s3cret") {
		t.Errorf("tools %v; server saw the header: %v", toolNames(set), ts.SawHeader("Authorization", "Bearer s3cret"))
	}
	if d := cmp.Diff([]string{"ns/tok"}, asked); d != "" {
		t.Errorf("secrets read (-want +got):\n%s", d)
	}

	// A Secret the reader refuses: the server is not dialled and the status says why.
	before := ts.Requests()
	set = p.Resolve(t.Context(), testAgent(2, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL, Headers: []sessionsv1alpha1.MCPHeader{hdr("other")}}))
	if st := set.Status(); len(set.Tools()) != 0 || st[0].Connected || !strings.Contains(st[0].Message, "not allowed") || st[0].Reason != ReasonSecretNotUsable {
		t.Errorf("refused secret: tools %v status %+v", toolNames(set), st)
	}
	if ts.Requests() != before {
		t.Errorf("the server was dialled without its header")
	}
}

func TestURLCheck(t *testing.T) {
	ts := newTestServer(t, false)
	p := newTestPool(t, Options{CheckURL: func(_ context.Context, ns string, u *url.URL) error {
		if u.Hostname() == "127.0.0.1" {
			return errors.New("loopback is not on the egress allow list")
		}
		return nil
	}})
	set := p.Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL}))
	if st := set.Status(); len(set.Tools()) != 0 || st[0].Connected || !strings.Contains(st[0].Message, "egress allow list") || st[0].Reason != ReasonEgressRefused {
		t.Errorf("refused URL: tools %v status %+v", toolNames(set), st)
	}
	if n := ts.Requests(); n != 0 {
		t.Errorf("a refused URL was dialled %d times", n)
	}
}

func TestNewGenerationReconnects(t *testing.T) {
	ts := newTestServer(t, false)
	p := newTestPool(t, Options{})
	old := p.Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL}))
	set := p.Resolve(t.Context(), testAgent(2, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL, AllowedTools: []string{"add"}}))
	if d := cmp.Diff([]string{"mcp__s__add"}, toolNames(set)); d != "" {
		t.Errorf("tools of generation 2 (-want +got):\n%s", d)
	}
	if got := old.Call(t.Context(), "mcp__s__echo", []byte(`{"text":"x"}`)); !got.IsError {
		t.Errorf("a set of the old generation still calls: %+v", got)
	}
	if got := p.Resolve(t.Context(), testAgent(2)); len(got.Tools()) != 0 || len(p.m) != 0 {
		t.Errorf("an agent without servers kept %d pool entries", len(p.m))
	}
}
