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

// Package mcptest serves an in-process MCP server, built with the same SDK the manager's
// client uses, for tests and benchmarks: echo, add (structured output), fail (isError),
// slow (blocks until released or cancelled) and a tool whose name providers refuse.
package mcptest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is a running test MCP server.
type Server struct {
	*mcp.Server
	// URL is the endpoint to configure on an Agent.
	URL string

	sse bool
	// stateless serves streamable HTTP without sessions: the only way the Go SDK serves
	// MCP 2026-07-28.
	stateless bool
	srv       *httptest.Server
	release   chan struct{}
	once      sync.Once
	// handlerNanos is the time spent inside tool handlers: a benchmark subtracts it.
	handlerNanos atomic.Int64
	// echoCalls counts the echo tool's calls; echoStarts holds when each began.
	echoCalls  atomic.Int64
	echoStarts []time.Time

	mu       sync.Mutex
	handler  http.Handler
	requests []http.Header
	// endpointOrigin, when set, is the origin the HTTP+SSE endpoint event names.
	endpointOrigin string
}

// EchoIn is the echo tool's input.
type EchoIn struct {
	Text string `json:"text"`
}

// AddIn is the add tool's input.
type AddIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// AddOut is the add tool's structured output.
type AddOut struct {
	Sum int `json:"sum"`
}

// New starts a server over streamable HTTP or, with sse, over the older HTTP+SSE transport,
// on a loopback port.
func New(sse bool) *Server { return NewAt(sse, "") }

// NewStateless starts a server over stateless streamable HTTP, which negotiates MCP
// 2026-07-28 with a client that asks for it (New's stateful one answers 2025-11-25).
func NewStateless() *Server { return newAt(false, true, "") }

// NewAt is New listening on addr (host:port; "" is 127.0.0.1 on any port).
func NewAt(sse bool, addr string) *Server { return newAt(sse, false, addr) }

func newAt(sse, stateless bool, addr string) *Server {
	s := &Server{Server: mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "v0"}, nil), sse: sse, stateless: stateless,
		release: make(chan struct{})}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		timed(s, func(_ context.Context, in EchoIn) (*mcp.CallToolResult, any, error) {
			s.mu.Lock()
			s.echoStarts = append(s.echoStarts, time.Now())
			s.mu.Unlock()
			s.echoCalls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Text}}}, nil, nil
		}))
	mcp.AddTool(s.Server, &mcp.Tool{Name: "add", Description: "Adds two integers."},
		timed(s, func(_ context.Context, in AddIn) (*mcp.CallToolResult, AddOut, error) {
			return nil, AddOut{Sum: in.A + in.B}, nil
		}))
	mcp.AddTool(s.Server, &mcp.Tool{Name: "fail"},
		timed(s, func(context.Context, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk on fire"}}}, nil, nil
		}))
	mcp.AddTool(s.Server, &mcp.Tool{Name: "slow"},
		timed(s, func(ctx context.Context, _ struct{}) (*mcp.CallToolResult, any, error) {
			select {
			case <-s.release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "finally"}}}, nil, nil
		}))
	mcp.AddTool(s.Server, &mcp.Tool{Name: "files.read/v2"},
		timed(s, func(context.Context, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "read"}}}, nil, nil
		}))
	s.Restart()
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Header.Clone())
		h, elsewhere := s.handler, s.endpointOrigin
		s.mu.Unlock()
		if elsewhere != "" && r.Method == http.MethodGet {
			w = &endpointRewriter{ResponseWriter: w, origin: elsewhere}
		}
		h.ServeHTTP(w, r)
	}))
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			panic(fmt.Sprintf("mcptest: listen on %s: %v", addr, err))
		}
		_ = s.srv.Listener.Close()
		s.srv.Listener = ln
	}
	s.srv.Start()
	s.URL = s.srv.URL
	return s
}

// timed wraps a handler to add its run time to the server's handler time.
func timed[In, Out any](s *Server, h func(context.Context, In) (*mcp.CallToolResult, Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		start := time.Now()
		defer func() { s.handlerNanos.Add(int64(time.Since(start))) }()
		return h(ctx, in)
	}
}

// EchoCalls is how many times the echo tool was called.
func (s *Server) EchoCalls() int { return int(s.echoCalls.Load()) }

// EchoStarts are the times the echo tool's calls began, in order.
func (s *Server) EchoStarts() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.echoStarts...)
}

// HandlerTime is the total time spent inside tool handlers so far.
func (s *Server) HandlerTime() time.Duration { return time.Duration(s.handlerNanos.Load()) }

// Restart replaces the HTTP handler with a fresh one that knows no session: what a server
// restart looks like to a client.
func (s *Server) Restart() {
	var h http.Handler
	if s.sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s.Server }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server },
			&mcp.StreamableHTTPOptions{Stateless: s.stateless})
	}
	s.mu.Lock()
	s.handler = h
	s.mu.Unlock()
}

// AnnounceEndpointAt makes the HTTP+SSE server name its session endpoint on another origin
// (scheme://host:port): what a hostile server does to move a client, and its headers,
// elsewhere.
func (s *Server) AnnounceEndpointAt(origin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endpointOrigin = origin
}

// endpointRewriter puts origin in front of the relative URL of the `endpoint` event.
type endpointRewriter struct {
	http.ResponseWriter
	origin string
	done   bool
}

func (w *endpointRewriter) Write(p []byte) (int, error) {
	if w.done {
		return w.ResponseWriter.Write(p)
	}
	q, found := bytes.CutPrefix(p, []byte("event: endpoint\ndata: /"))
	if !found {
		return w.ResponseWriter.Write(p)
	}
	w.done = true
	if _, err := w.ResponseWriter.Write([]byte("event: endpoint\ndata: " + w.origin + "/")); err != nil {
		return 0, err
	}
	if _, err := w.ResponseWriter.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush lets the SSE handler flush through the rewriter.
func (w *endpointRewriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap gives http.ResponseController the real writer.
func (w *endpointRewriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Requests is how many HTTP requests the server received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// SawHeader says whether any request carried the header with value.
func (s *Server) SawHeader(name, value string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.requests {
		if h.Get(name) == value {
			return true
		}
	}
	return false
}

// LastHeader is the value of the header name on the latest request that carried it.
func (s *Server) LastHeader(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.requests) - 1; i >= 0; i-- {
		if v := s.requests[i].Get(name); v != "" {
			return v
		}
	}
	return ""
}

// Close releases the slow tool and stops the server; it may be called more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.release)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Hanging is a server that accepts connections and never answers: a black-holed MCP server.
type Hanging struct {
	// URL is the endpoint to configure on an Agent.
	URL string

	ln       net.Listener
	mu       sync.Mutex
	conns    []net.Conn
	accepted int
	closed   bool
}

// Hang starts a Hanging server on addr (host:port).
func Hang(addr string) *Hanging {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		panic(fmt.Sprintf("mcptest: listen on %s: %v", addr, err))
	}
	h := &Hanging{URL: "http://" + ln.Addr().String() + "/mcp", ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			if h.closed {
				_ = c.Close()
			} else {
				h.conns = append(h.conns, c)
				h.accepted++
			}
			h.mu.Unlock()
		}
	}()
	return h
}

// Accepted is how many connections the server accepted.
func (h *Hanging) Accepted() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.accepted
}

// Close stops listening and closes every connection.
func (h *Hanging) Close() {
	_ = h.ln.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, c := range h.conns {
		_ = c.Close()
	}
	h.conns = nil
}
