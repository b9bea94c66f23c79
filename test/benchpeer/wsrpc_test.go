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
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// fakeGateway speaks the gateway's WebSocket protocol as far as the bench uses it: the
// connect.challenge event, connect, then sessions.list answers of 50 rows. answer decides,
// per connection (1, 2, ...) and per list request on it (1, 2, ...), what the gateway does.
type fakeGateway struct {
	srv    *httptest.Server
	dials  atomic.Int32
	answer func(conn, req int) gatewayMove
	// afterConnect runs, beside the connection's reader, once the client is signed in.
	afterConnect func(c *websocket.Conn)
}

type gatewayMove int

const (
	answerRows    gatewayMove = iota // 50 rows
	answerError                      // ok: false
	answerNone                       // never answer
	dropConn                         // close the TCP connection
	answerGarbage                    // a frame that is not JSON
)

func newFakeGateway(t *testing.T, answer func(conn, req int) gatewayMove) *fakeGateway {
	t.Helper()
	g := &fakeGateway{answer: answer}
	rows := make([]map[string]string, 50)
	for i := range rows {
		rows[i] = map[string]string{"key": "agent:main:l" + string(rune('a'+i%26))}
	}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer func() { _ = c.CloseNow() }()
		n := int(g.dials.Add(1))
		ctx := r.Context()
		write := func(v any) error {
			b, _ := json.Marshal(v)
			return c.Write(ctx, websocket.MessageText, b)
		}
		if write(map[string]any{"type": "event", "event": "connect.challenge", "payload": map[string]any{"nonce": "n"}}) != nil {
			return
		}
		lists := 0
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var f frame
			if json.Unmarshal(data, &f) != nil {
				return
			}
			switch f.Method {
			case "connect":
				if write(map[string]any{"type": "res", "id": f.ID, "ok": true, "payload": map[string]any{"type": "hello-ok"}}) != nil {
					return
				}
				if g.afterConnect != nil {
					go g.afterConnect(c)
				}
			case "sessions.list":
				lists++
				switch g.answer(n, lists) {
				case answerRows:
					err = write(map[string]any{"type": "res", "id": f.ID, "ok": true, "payload": map[string]any{"sessions": rows}})
				case answerError:
					err = write(map[string]any{"type": "res", "id": f.ID, "ok": false, "error": map[string]any{"code": "INVALID_REQUEST", "message": "bad limit"}})
				case answerGarbage:
					err = c.Write(ctx, websocket.MessageText, []byte("<html>not json</html>"))
				case answerNone:
				case dropConn:
					return
				}
				if err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *fakeGateway) dial(timeout time.Duration) func(ctx context.Context) (*rpcClient, error) {
	return func(ctx context.Context) (*rpcClient, error) {
		return dialRPC(ctx, "ws"+strings.TrimPrefix(g.srv.URL, "http"), "tok", timeout)
	}
}

// The gateway pings its clients every 25 s and closes one whose pong is late: a client
// that sits between requests still answers, because its reader never stops.
func TestGatewayPingsAreAnsweredBetweenCalls(t *testing.T) {
	pinged := make(chan error, 1)
	g := newFakeGateway(t, func(int, int) gatewayMove { return answerRows })
	g.afterConnect = func(c *websocket.Conn) {
		// A deadline for a failing test only: a pong on loopback takes microseconds.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		pinged <- c.Ping(ctx)
	}
	c, err := g.dial(rpcCallTimeout)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if err := <-pinged; err != nil {
		t.Fatalf("the idle client did not answer the gateway's ping: %v", err)
	}
	if _, err := c.call(context.Background(), "sessions.list", map[string]any{"limit": 50}); err != nil {
		t.Fatalf("a call after the ping: %v", err)
	}
}

// Reads through rpcReads: a lost connection is redialed and the read sent again, within a
// bound; a gateway's error answer and an answer that never comes are not hidden.
func TestGatewayReadsRedialWithinABound(t *testing.T) {
	cases := map[string]struct {
		answer      func(conn, req int) gatewayMove
		reads       int
		wantErr     string
		wantConnErr bool // the error wraps errConnLost
		wantDeadln  bool // the error wraps context.DeadlineExceeded
		wantDials   int32
		wantRedials int
	}{
		"a quiet gateway": {answer: func(int, int) gatewayMove { return answerRows }, reads: 5, wantDials: 1},
		"the first connection is closed under the second read": {
			answer: func(conn, req int) gatewayMove {
				if conn == 1 && req == 2 {
					return dropConn
				}
				return answerRows
			}, reads: 5, wantDials: 2, wantRedials: 1},
		"the gateway refuses: no retry": {
			answer: func(int, int) gatewayMove { return answerError }, reads: 1, wantDials: 1,
			wantErr: `sessions.list: {"code":"INVALID_REQUEST","message":"bad limit"}`},
		"the gateway sends a frame that is not JSON: no retry": {
			answer: func(int, int) gatewayMove { return answerGarbage }, reads: 1, wantDials: 1,
			wantErr: "sessions.list: the gateway sent a frame that is not JSON"},
		"every connection is closed: three attempts, then the error": {
			answer: func(int, int) gatewayMove { return dropConn }, reads: 1, wantDials: 3, wantRedials: 2,
			wantErr: "sessions.list: gave up after 3 attempts", wantConnErr: true},
		"no answer: each attempt has its deadline": {
			answer: func(int, int) gatewayMove { return answerNone }, reads: 1, wantDials: 3, wantRedials: 2,
			wantErr: "sessions.list: gave up after 3 attempts", wantDeadln: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := newFakeGateway(t, tc.answer)
			reads := newRPCReads(g.dial(250 * time.Millisecond))
			defer reads.close()
			var err error
			for range tc.reads {
				var payload json.RawMessage
				var took time.Duration
				if payload, took, err = reads.read(context.Background(), "sessions.list", map[string]any{"limit": 50}); err != nil {
					break
				}
				if !strings.Contains(string(payload), `"sessions":[`) || took <= 0 {
					t.Fatalf("payload %.80s, took %s", payload, took)
				}
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("reads: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q...", err, tc.wantErr)
			}
			if got := errors.Is(err, errConnLost); got != tc.wantConnErr {
				t.Errorf("errors.Is(err, errConnLost) = %v: %v", got, err)
			}
			if got := errors.Is(err, context.DeadlineExceeded); got != tc.wantDeadln {
				t.Errorf("errors.Is(err, DeadlineExceeded) = %v: %v", got, err)
			}
			if got := g.dials.Load(); got != tc.wantDials {
				t.Errorf("dials = %d, want %d", got, tc.wantDials)
			}
			if len(reads.redials) != tc.wantRedials || (tc.wantRedials > 0) != (reads.summary() != "") {
				t.Errorf("redials %v, summary %q; want %d", reads.redials, reads.summary(), tc.wantRedials)
			}
		})
	}
}

// Redials are bounded over the whole figure too, not only per read.
func TestGatewayRedialsAreBoundedInAll(t *testing.T) {
	g := newFakeGateway(t, func(_, req int) gatewayMove {
		if req == 2 {
			return dropConn // each connection is lost under its second read
		}
		return answerRows
	})
	reads := newRPCReads(g.dial(rpcCallTimeout))
	defer reads.close()
	var err error
	n := 0
	for ; n < 20 && err == nil; n++ {
		_, _, err = reads.read(context.Background(), "sessions.list", nil)
	}
	if err == nil || !errors.Is(err, errConnLost) || len(reads.redials) != reads.maxRedials {
		t.Fatalf("after %d reads: err %v, %d redials; want errConnLost after %d", n, err, len(reads.redials), reads.maxRedials)
	}
}

// The list figure's samples are the answered attempts, after three untimed reads; a page
// without its 50 rows fails it.
func TestTimedListSamples(t *testing.T) {
	g := newFakeGateway(t, func(int, int) gatewayMove { return answerRows })
	reads := newRPCReads(g.dial(rpcCallTimeout))
	defer reads.close()
	lat, err := timedList(context.Background(), reads, 7)
	if err != nil || len(lat) != 7 {
		t.Fatalf("%d samples, %v; want 7", len(lat), err)
	}
}
