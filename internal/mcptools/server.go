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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// server is one MCP server of one Agent generation: its client session, opened on first
// use, and its tool list, cached until the server says it changed.
type server struct {
	cfg    serverConfig
	opts   *Options
	client *mcp.Client
	http   *http.Client

	// lock guards what follows. A channel, not a mutex: a probe with a short deadline gives
	// up waiting behind a turn's connect that may take the server's whole timeout.
	// limit bounds what is read of each answer, and says when it cut one.
	limit    *egress.Limiter
	lock     chan struct{}
	cs       *mcp.ClientSession
	cancel   context.CancelFunc // ends cs's connection
	tools    []Tool             // nil: not listed yet
	err      error              // the last connect failure
	failedAt time.Time
	failures int // connect failures in a row: the redial back-off grows with them
	closed   bool

	// stale is set by a tools/list_changed notification: the next Resolve lists again.
	stale atomic.Bool
}

func newServer(c serverConfig, o *Options) *server {
	s := &server{cfg: c, opts: o, lock: make(chan struct{}, 1)}
	if c.parsed != nil {
		s.limit = egress.NewLimiter(o.Transport, egress.MCPLimit(o.ReadLimit))
		s.http = httpClient(s.limit, c.parsed, c.headers)
	}
	s.client = mcp.NewClient(implementation, &mcp.ClientOptions{
		// No roots, sampling or elicitation: the manager only calls tools.
		Capabilities:           &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.stale.Store(true) },
	})
	return s
}

// list returns the server's tools, connecting and listing when none are cached or the
// server announced a change.
func (s *server) list(ctx context.Context) ([]Tool, error) {
	if s.cfg.err != nil {
		return nil, s.cfg.err
	}
	ctx, cancel := context.WithTimeout(ctx, max(s.cfg.timeout, MinListTimeout))
	defer cancel()
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.release()
	if s.tools != nil && !s.stale.Load() {
		return s.tools, nil
	}
	cs, err := s.session(ctx)
	if err != nil {
		return nil, probeError(ctx, err)
	}
	// Cleared before listing: a change announced while the list is read lists again.
	s.stale.Store(false)
	tools, err := s.fetch(ctx, cs)
	if err != nil {
		s.dropLocked(cs)
		return nil, probeError(ctx, fmt.Errorf("tools/list: %w", err))
	}
	s.tools = tools
	return tools, nil
}

// fetch reads the tool list (every page, bounded) and keeps the allowed tools.
func (s *server) fetch(ctx context.Context, cs *mcp.ClientSession) ([]Tool, error) {
	out := []Tool{}
	seen := map[string]bool{}
	n := 0
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if n++; n > maxListed || len(out) >= MaxToolsPerServer {
			break
		}
		if seen[t.Name] || (len(s.cfg.allowed) > 0 && !contains(s.cfg.allowed, t.Name)) {
			continue
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || len(schema) > MaxSchemaBytes || t.InputSchema == nil {
			continue
		}
		seen[t.Name] = true
		out = append(out, Tool{
			Name: ToolName(s.cfg.name, t.Name), Server: s.cfg.name, Remote: t.Name,
			Description: truncate(t.Description, MaxDescriptionBytes), Schema: schema,
		})
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// call calls one tool within the server's timeout.
func (s *server) call(ctx context.Context, tool string, args []byte, carry *policy.CarriedChain) Result {
	arguments := map[string]any{}
	if a := bytes.TrimSpace(args); len(a) > 0 && string(a) != "null" {
		if err := json.Unmarshal(a, &arguments); err != nil {
			return errorResult("invalid arguments: %v", err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	cs, err := s.lockedSession(cctx)
	if err != nil {
		return errorResult("MCP server %q is unavailable: %v", s.cfg.name, err)
	}
	params := &mcp.CallToolParams{Name: tool, Arguments: arguments}
	if carry != nil {
		params.Meta = mcp.Meta{policy.ChainMetaKey: json.RawMessage(carry.Encode()), "baggage": policy.ChainBaggage(carry)}
	}
	res, err := cs.CallTool(cctx, params)
	switch {
	case err == nil:
		return toResult(res)
	case ctx.Err() != nil:
		return errorResult("call of %s on MCP server %q cancelled", tool, s.cfg.name)
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return errorResult("MCP server %q did not answer %s within %s", s.cfg.name, tool, s.cfg.timeout)
	}
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		// Not an answer from the server: the session is broken (server restarted, connection
		// lost, an answer cut at the read limit, which the SDK reports as a lost one). The
		// next call connects again.
		s.drop(cs)
		if cut := s.limit.Cut(); cut != nil {
			err = cut
		}
	}
	return errorResult("MCP server %q: %s: %v", s.cfg.name, tool, err)
}

// session returns the open client session, connecting if there is none. A server that
// failed is not dialled again for a back-off that starts at RetryAfter and doubles with
// each failure in a row, up to MaxRetryAfter: a down or black-holed server costs turns one
// bounded wait now and then, not one per turn. A probe that ran out of its own (shorter)
// time is no failure of the server. s.lock is held.
func (s *server) session(ctx context.Context) (*mcp.ClientSession, error) {
	if s.closed {
		return nil, errors.New("the agent changed; retry")
	}
	if s.cs != nil {
		return s.cs, nil
	}
	if s.err != nil && s.opts.Clock.Since(s.failedAt) < redialAfter(s.failures) {
		return nil, s.err
	}
	cs, cancel, err := s.connect(ctx)
	if err != nil {
		if !probeEnded(ctx) {
			s.err, s.failedAt = err, s.opts.Clock.Now()
			s.failures++
		}
		return nil, err
	}
	s.cs, s.cancel, s.err, s.failures = cs, cancel, nil, 0
	go func() {
		_ = cs.Wait()
		s.drop(cs)
	}()
	return cs, nil
}

// lockedSession is session under s.lock.
func (s *server) lockedSession(ctx context.Context) (*mcp.ClientSession, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.release()
	return s.session(ctx)
}

// acquire takes s.lock, or gives up when ctx ends first.
func (s *server) acquire(ctx context.Context) error {
	select {
	case s.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return probeError(ctx, fmt.Errorf("another connect to the server is under way: %w", ctx.Err()))
	}
}

func (s *server) release() { <-s.lock }

// redialAfter is the back-off after n connect failures in a row.
func redialAfter(n int) time.Duration {
	d := RetryAfter
	for i := 1; i < n && d < MaxRetryAfter; i++ {
		d *= 2
	}
	return min(d, MaxRetryAfter)
}

// connect opens a client session: streamable HTTP first, then the older HTTP+SSE transport
// (servers written before the 2025-03-26 revision). The handshake is bounded by ctx; the
// connection then lives on until the session is dropped.
func (s *server) connect(ctx context.Context) (*mcp.ClientSession, context.CancelFunc, error) {
	cs, cancel, err := s.dial(ctx, &mcp.StreamableClientTransport{Endpoint: s.cfg.url, HTTPClient: s.http}, ProtocolVersion)
	if err == nil || ctx.Err() != nil {
		return cs, cancel, err
	}
	cs, cancel, sseErr := s.dial(ctx, &mcp.SSEClientTransport{Endpoint: s.cfg.url, HTTPClient: s.http}, LegacyProtocolVersion)
	if sseErr != nil {
		return nil, nil, fmt.Errorf("initialize: %w (HTTP+SSE: %w)", err, sseErr)
	}
	return cs, cancel, nil
}

// dial connects one transport. The SDK ties an HTTP+SSE stream to the context it was
// opened with, so the connection gets its own context, cancelled if the handshake outlives
// ctx and otherwise kept until the session is dropped.
func (s *server) dial(ctx context.Context, t mcp.Transport, version string) (*mcp.ClientSession, context.CancelFunc, error) {
	connCtx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	cs, err := s.client.Connect(connCtx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if !stop() && err == nil {
		// ctx ended as the handshake finished: the connection is already cancelled.
		_ = cs.Close()
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return cs, cancel, nil
}

// drop forgets a broken session; the cached tool list stays.
func (s *server) drop(cs *mcp.ClientSession) {
	_ = s.acquire(context.Background())
	defer s.release()
	s.dropLocked(cs)
}

func (s *server) dropLocked(cs *mcp.ClientSession) {
	if s.cs != cs || cs == nil {
		return
	}
	s.cs = nil
	cancel := s.cancel
	s.cancel = nil
	go func() {
		_ = cs.Close()
		cancel()
	}()
}

// close ends the session for good (the Agent changed or was deleted).
func (s *server) close() {
	_ = s.acquire(context.Background())
	defer s.release()
	s.closed = true
	s.dropLocked(s.cs)
}
