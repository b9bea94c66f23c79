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
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// testServer is an in-process MCP server built with the SDK the client uses.
type testServer struct {
	*mcp.Server
	URL string
	// release unblocks the slow tool.
	release chan struct{}

	mu      sync.Mutex
	headers []http.Header
	handler http.Handler
	sse     bool
	srv     *httptest.Server
}

type echoIn struct {
	Text string `json:"text"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// newTestServer serves echo, add (structured), fail (isError), slow and a tool whose name
// providers refuse, over streamable HTTP or, with sse, the HTTP+SSE transport.
func newTestServer(t *testing.T, sse bool) *testServer {
	t.Helper()
	ts := &testServer{Server: mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil), release: make(chan struct{})}
	mcp.AddTool(ts.Server, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(ts.Server, &mcp.Tool{Name: "add", Description: "Adds."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(ts.Server, &mcp.Tool{Name: "fail"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk on fire"}}}, nil, nil
		})
	mcp.AddTool(ts.Server, &mcp.Tool{Name: "slow"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			select {
			case <-ts.release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "finally"}}}, nil, nil
		})
	mcp.AddTool(ts.Server, &mcp.Tool{Name: "files.read/v2"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "read"}}}, nil, nil
		})
	ts.sse = sse
	ts.restart()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.headers = append(ts.headers, r.Header.Clone())
		h := ts.handler
		ts.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	ts.srv = srv
	t.Cleanup(func() {
		select {
		case <-ts.release:
		default:
			close(ts.release)
		}
		srv.CloseClientConnections()
		srv.Close()
	})
	ts.URL = srv.URL
	return ts
}

// restart replaces the HTTP handler with a fresh one, which knows no session: what a
// server restart looks like to a client.
func (ts *testServer) restart() {
	var h http.Handler
	if ts.sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return ts.Server }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ts.Server }, nil)
	}
	ts.mu.Lock()
	ts.handler = h
	ts.mu.Unlock()
}

// sawHeader says whether any request carried the header value.
func (ts *testServer) sawHeader(name, value string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, h := range ts.headers {
		if h.Get(name) == value {
			return true
		}
	}
	return false
}

// testAgent is an Agent with the given MCP servers.
func testAgent(gen int64, servers ...v1.MCPServer) *v1.Agent {
	return &v1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "uid-a", Generation: gen},
		Spec:       v1.AgentSpec{Tools: v1.ToolsSpec{MCPServers: servers}},
	}
}

func seconds(n int32) *int32 { return &n }

// newTestPool returns a pool closed at the end of the test.
func newTestPool(t *testing.T, o Options) *Pool {
	p := NewPool(o)
	t.Cleanup(p.Close)
	return p
}

// toolNames are the model-facing names of a set's tools.
func toolNames(s *Set) []string {
	var out []string
	for _, t := range s.Tools() {
		out = append(out, t.Name)
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
