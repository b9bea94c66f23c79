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

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// rpcCallTimeout bounds one request on the gateway: a call that has no answer by then fails
// (a gateway busy for 30 s on one RPC is a finding, not a wait).
const rpcCallTimeout = 30 * time.Second

// errConnLost marks a call that failed because its connection went away (the gateway closed
// it, a write hit a broken pipe): the request may be sent again on a new connection.
var errConnLost = errors.New("gateway connection lost")

// rpcClient is a WebSocket connection to OpenClaw's gateway as a backend operator client on
// loopback: the connect.challenge event, then connect with the token, then requests.
//
// A goroutine reads the connection for as long as it is open, so the gateway's pings are
// answered between requests too: its keepalive pings every 25 s and closes a connection
// whose pong is 25 s late, and coder/websocket answers a ping only while something reads.
// Answers are handed to the call waiting for their id; events are dropped.
type rpcClient struct {
	conn    *websocket.Conn
	timeout time.Duration

	mu      sync.Mutex
	next    int
	pending map[string]chan frame
	readErr error
	done    chan struct{} // closed when the reader stops; readErr says why
	stop    context.CancelFunc
}

type frame struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Event   string          `json:"event,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	OK      bool            `json:"ok,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func dialGateway(ctx context.Context, g *gateway) (*rpcClient, error) {
	return dialRPC(ctx, "ws"+strings.TrimPrefix(g.URL, "http"), g.Token, rpcCallTimeout)
}

// dialRPC connects to the gateway at url (ws://) and signs in with token; each call then
// waits timeout at most for its answer.
func dialRPC(ctx context.Context, url, token string, timeout time.Duration) (*rpcClient, error) {
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, _, err := websocket.Dial(hctx, url, nil)
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(64 << 20)
	for {
		f, err := readFrame(hctx, conn)
		if err != nil {
			_ = conn.CloseNow()
			return nil, fmt.Errorf("waiting for connect.challenge: %w", err)
		}
		if f.Type == "event" && f.Event == "connect.challenge" {
			break
		}
	}
	// The reader outlives the dial's context: a canceled Read closes the connection.
	rctx, stop := context.WithCancel(context.Background())
	c := &rpcClient{conn: conn, timeout: timeout, pending: map[string]chan frame{}, done: make(chan struct{}), stop: stop}
	go c.readLoop(rctx)
	_, err = c.call(ctx, "connect", map[string]any{
		"minProtocol": 4, "maxProtocol": 4,
		"client": map[string]any{"id": "gateway-client", "version": "1.0.0", "platform": "linux", "mode": "backend"},
		"role":   "operator", "scopes": []string{"operator.read", "operator.write", "operator.admin"},
		"caps": []string{}, "commands": []string{}, "permissions": map[string]any{},
		"auth": map[string]any{"token": token},
	})
	if err != nil {
		c.close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	return c, nil
}

func readFrame(ctx context.Context, conn *websocket.Conn) (frame, error) {
	_, data, err := conn.Read(ctx)
	if err != nil {
		return frame{}, err
	}
	var f frame
	return f, json.Unmarshal(data, &f)
}

// readLoop reads every frame until the connection ends, handing each answer to its call.
// A frame that is not JSON ends it too, as a failure of the gateway, not a lost connection.
func (c *rpcClient) readLoop(ctx context.Context) {
	var err error
	lost := true
	for {
		var data []byte
		if _, data, err = c.conn.Read(ctx); err != nil {
			break
		}
		var f frame
		if err = json.Unmarshal(data, &f); err != nil {
			err, lost = fmt.Errorf("the gateway sent a frame that is not JSON: %w", err), false
			_ = c.conn.CloseNow()
			break
		}
		if f.Type != "res" {
			continue
		}
		c.mu.Lock()
		ch := c.pending[f.ID]
		delete(c.pending, f.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- f // buffered: the caller may have given up
		}
	}
	if lost {
		err = fmt.Errorf("%w: %w", errConnLost, err)
	}
	c.mu.Lock()
	c.readErr = err
	c.mu.Unlock()
	close(c.done)
}

// call sends one request and returns its answer's payload. It waits the client's timeout
// at most; an error wrapping errConnLost says the connection ended under it.
func (c *rpcClient) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	ch := make(chan frame, 1)
	c.mu.Lock()
	c.next++
	id := strconv.Itoa(c.next)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	data, err := json.Marshal(frame{Type: "req", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	if err := c.conn.Write(ctx, websocket.MessageText, data); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: no answer within %s: %w", method, c.timeout, ctx.Err())
		}
		return nil, fmt.Errorf("%s: %w: %w", method, errConnLost, err)
	}
	select {
	case f := <-ch:
		if !f.OK {
			return nil, fmt.Errorf("%s: %s", method, f.Error)
		}
		return f.Payload, nil
	case <-c.done:
		c.mu.Lock()
		err := c.readErr
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, err)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no answer within %s: %w", method, c.timeout, ctx.Err())
	}
}

func (c *rpcClient) close() {
	_ = c.conn.Close(websocket.StatusNormalClosure, "")
	c.stop()
	<-c.done
}

// rpcReads sends idempotent reads (sessions.list, chat.history) to the gateway, dialing a new
// connection when the one it has is lost or a read gets no answer in time, at most
// maxAttempts times per read and maxRedials times in all. Everything else (the gateway's
// error answer, a bad payload, a connection refused) fails at once. Redials are counted
// and their causes kept, so the figure can say what its numbers went through.
type rpcReads struct {
	dial        func(ctx context.Context) (*rpcClient, error)
	maxAttempts int
	maxRedials  int

	c       *rpcClient
	redials []error
}

func newRPCReads(dial func(ctx context.Context) (*rpcClient, error)) *rpcReads {
	return &rpcReads{dial: dial, maxAttempts: 3, maxRedials: 5}
}

// read sends method and returns its payload with the time of the attempt that answered,
// the dial of a new connection not included.
func (r *rpcReads) read(ctx context.Context, method string, params any) (json.RawMessage, time.Duration, error) {
	var errs []error
	for attempt := 1; ; attempt++ {
		if r.c == nil {
			c, err := r.dial(ctx)
			if err != nil {
				return nil, 0, errors.Join(append(errs, fmt.Errorf("dial: %w", err))...)
			}
			r.c = c
		}
		start := time.Now()
		payload, err := r.c.call(ctx, method, params)
		if err == nil {
			return payload, time.Since(start), nil
		}
		errs = append(errs, err)
		if (!errors.Is(err, errConnLost) && !errors.Is(err, context.DeadlineExceeded)) || ctx.Err() != nil {
			return nil, 0, errors.Join(errs...)
		}
		if attempt >= r.maxAttempts || len(r.redials) >= r.maxRedials {
			return nil, 0, fmt.Errorf("%s: gave up after %d attempts and %d redials in all: %w", method, attempt, len(r.redials), errors.Join(errs...))
		}
		r.c.close()
		r.c = nil
		r.redials = append(r.redials, err)
	}
}

// summary says how many redials the reads needed and the first cause, "" for none.
func (r *rpcReads) summary() string {
	if len(r.redials) == 0 {
		return ""
	}
	return fmt.Sprintf("openclaw redialed %d× (first: %v)", len(r.redials), r.redials[0])
}

func (r *rpcReads) close() {
	if r.c != nil {
		r.c.close()
		r.c = nil
	}
}
