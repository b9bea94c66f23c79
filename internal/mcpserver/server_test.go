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
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver/mcpservertest"
)

const ns = mcpservertest.Namespace

func endpoint(t *testing.T) (*httptest.Server, client.WithWatch) {
	h, fc := mcpservertest.Handler()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, fc
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect is the Go SDK's client asking for its newest revision, as alice.
func connect(t *testing.T, url string) (*mcp.ClientSession, error) {
	return connectRevision(t, url, "alice", "")
}

// connectRevision is the Go SDK's client asking for revision rev ("": its newest).
func connectRevision(t *testing.T, url, token, rev string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	return c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token}}}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
}

func TestToolsAreTheSessionToolsAndSubagents(t *testing.T) {
	srv, _ := endpoint(t)
	cs, err := connect(t, srv.URL+"/mcp?namespace="+ns)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	want := []string{"agents_list", "approvals_decide", "approvals_list", "memory_get", "memory_search", "memory_write", "session_status", "sessions", "sessions_history", "sessions_list", "sessions_search", "sessions_send", "sessions_spawn", "sessions_yield", "subagents"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestSendAsAPerson(t *testing.T) {
	srv, fc := endpoint(t)
	cs, err := connect(t, srv.URL+"/mcp?namespace="+ns)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sessions_send",
		Arguments: map[string]any{"sessionKey": "main", "message": "hello", "timeoutSeconds": 0}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || !strings.Contains(text, `"status":"accepted"`) {
		t.Fatalf("sessions_send = %s (error %v), want accepted", text, res.IsError)
	}
	var sends sessionsv1alpha1.SessionSendList
	if err := fc.List(t.Context(), &sends); err != nil {
		t.Fatal(err)
	}
	if len(sends.Items) != 1 || sends.Items[0].Spec.FromSessionKey != "" || sends.Items[0].Namespace != ns {
		t.Errorf("sends %+v, want one in %s from no session", sends.Items, ns)
	}
}

func TestRefusals(t *testing.T) {
	srv, _ := endpoint(t)
	post := func(token, host, origin, query string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp"+query, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	cases := map[string]struct {
		token, host, origin, query string
		want                       int
	}{
		"no token":                   {want: http.StatusUnauthorized},
		"a token not accepted":       {token: "eve", want: http.StatusUnauthorized},
		"a namespace it cannot read": {token: "mallory", query: "?namespace=kube-system", want: http.StatusForbidden},
		"a rebound host name":        {token: "alice", host: "evil.example:8443", want: http.StatusForbidden},
		"another site's page":        {token: "alice", origin: "https://evil.example", want: http.StatusForbidden},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := post(c.token, c.host, c.origin, c.query); got != c.want {
				t.Errorf("status %d, want %d", got, c.want)
			}
		})
	}
}
