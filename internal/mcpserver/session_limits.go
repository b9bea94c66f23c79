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

package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
)

// Defaults of SessionLimits.
const (
	DefaultMaxSessionsPerUser = 16
	DefaultSessionIdleTimeout = 10 * time.Minute
)

// SessionLimits bound what one user holds on /mcp: every MCP session costs the store memory
// until it is closed, so a user has at most MaxPerUser of them and an unused one is closed
// after IdleTimeout. The SDK's own SessionTimeout is not used: it neither counts per user,
// nor sees an open GET stream as use, nor takes an injected clock.
type SessionLimits struct {
	// MaxPerUser bounds one user's open sessions (0: DefaultMaxSessionsPerUser); the next
	// initialize gets 429.
	MaxPerUser int
	// IdleTimeout closes a session no request has used for this long (0:
	// DefaultSessionIdleTimeout).
	IdleTimeout time.Duration
	// Streams, when set, counts each GET stream against the user's stream cap, which
	// /events and history streams share.
	Streams interface {
		Acquire(user string) (release func(), ok bool)
		Max() int
	}
	// Rates, when set, refuses a POST from a user whose API rate is spent (429) before it
	// reaches a tool that would call the API server for them.
	Rates *userlimits.Rates
	// Clock times idleness; nil is the real clock.
	Clock clock.WithDelayedExecution
}

const sessionIDHeader = "Mcp-Session-Id"

// sessionLimiter sits in front of the SDK's handler and tracks each session's user and use.
type sessionLimiter struct {
	lim  SessionLimits
	next http.Handler

	mu       sync.Mutex
	perUser  map[string]int // sessions held, with initializes in flight
	sessions map[string]*trackedSession
}

type trackedSession struct {
	user     string
	inFlight int
	idle     clock.Timer // armed while no request uses the session
	uses     int         // bumped by every use, so a timer that fired meanwhile does nothing
}

func newSessionLimiter(lim SessionLimits, next http.Handler) *sessionLimiter {
	if lim.MaxPerUser <= 0 {
		lim.MaxPerUser = DefaultMaxSessionsPerUser
	}
	if lim.IdleTimeout <= 0 {
		lim.IdleTimeout = DefaultSessionIdleTimeout
	}
	if lim.Clock == nil {
		lim.Clock = clock.RealClock{}
	}
	return &sessionLimiter{lim: lim, next: next, perUser: map[string]int{}, sessions: map[string]*trackedSession{}}
}

// serve passes r, from user, to the SDK within user's bounds.
func (l *sessionLimiter) serve(w http.ResponseWriter, r *http.Request, user string) {
	id := r.Header.Get(sessionIDHeader)
	if id == "" {
		if r.Method != http.MethodPost {
			l.next.ServeHTTP(w, r) // the SDK refuses it
			return
		}
		l.open(w, r, user)
		return
	}
	if !l.use(id, user) {
		// Unknown, expired, or another user's: the same answer, so ids cannot be probed.
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	defer l.used(id)
	switch r.Method {
	case http.MethodGet:
		if l.lim.Streams != nil {
			release, ok := l.lim.Streams.Acquire(user)
			if !ok {
				refuse(w, r, fmt.Sprintf("user %q has %d streams open (/events, history and /mcp together), the most allowed; "+
					"close one, or raise --max-streams-per-user", user, l.lim.Streams.Max()))
				return
			}
			defer release()
		}
	case http.MethodPost:
		if err := l.lim.Rates.Exhausted(user); err != nil {
			refuse(w, r, err.Error())
			return
		}
	}
	sw := &statusWriter{ResponseWriter: w}
	l.next.ServeHTTP(sw, r)
	if r.Method == http.MethodDelete || sw.code == http.StatusNotFound {
		l.forget(id)
	}
}

// open serves a request that opens a session (an initialize), if user may hold one more.
func (l *sessionLimiter) open(w http.ResponseWriter, r *http.Request, user string) {
	if err := l.lim.Rates.Exhausted(user); err != nil {
		refuse(w, r, err.Error())
		return
	}
	if !l.reserve(user) {
		refuse(w, r, fmt.Sprintf("user %q has %d MCP sessions open, the most allowed; close one (DELETE), let one idle out (%s), "+
			"or raise --max-mcp-sessions-per-user", user, l.lim.MaxPerUser, l.lim.IdleTimeout))
		return
	}
	// The SDK closes a session whose first message is not an initialize.
	initialize := isInitialize(r)
	// The session is bound before the SDK's answer goes out: the client's next request
	// may arrive before ServeHTTP returns.
	var id string
	hw := &headerHook{ResponseWriter: w, hook: func(h http.Header) {
		if initialize && l.bind(user, h.Get(sessionIDHeader)) {
			id = h.Get(sessionIDHeader)
		}
	}}
	l.next.ServeHTTP(hw, r)
	hw.fire() // an answer with no body
	if id == "" {
		l.mu.Lock()
		l.releaseLocked(user)
		l.mu.Unlock()
		return
	}
	l.used(id)
}

// isInitialize tells whether r's body is an initialize request, leaving the body to be read
// again; a body it cannot read as one JSON-RPC message counts as one (the safe side).
func isInitialize(r *http.Request) bool {
	m, ok := methodOf(r)
	return !ok || m == "initialize"
}

// methodOf is the JSON-RPC method of r's body, which it leaves readable; false when the
// body is not one JSON-RPC message.
func methodOf(r *http.Request) (string, bool) {
	b, err := io.ReadAll(io.LimitReader(r.Body, mcp.DefaultMaxRequestBodyBytes+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	var msg struct {
		Method string `json:"method"`
	}
	if err != nil || json.Unmarshal(b, &msg) != nil {
		return "", false
	}
	return msg.Method, true
}

func (l *sessionLimiter) reserve(user string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perUser[user] >= l.lim.MaxPerUser {
		return false
	}
	l.perUser[user]++
	return true
}

// bind gives user's reservation to the session the SDK opened (id), in use by the request
// that opened it; false when there is none.
func (l *sessionLimiter) bind(user, id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id == "" || l.sessions[id] != nil {
		return false
	}
	l.sessions[id] = &trackedSession{user: user, inFlight: 1}
	return true
}

// use marks a request of user on session id as started; false when id is not user's.
func (l *sessionLimiter) use(id, user string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sessions[id]
	if s == nil || s.user != user {
		return false
	}
	s.inFlight++
	s.uses++
	if s.idle != nil {
		s.idle.Stop()
	}
	return true
}

// used marks a request on session id as ended; the last one arms the idle timer.
func (l *sessionLimiter) used(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.sessions[id]; s != nil {
		if s.inFlight--; s.inFlight == 0 {
			l.armLocked(id, s)
		}
	}
}

func (l *sessionLimiter) armLocked(id string, s *trackedSession) {
	uses := s.uses
	// The fake clock runs AfterFunc callbacks while holding its lock: expire must not wait here.
	s.idle = l.lim.Clock.AfterFunc(l.lim.IdleTimeout, func() { go l.expire(id, uses) })
}

// expire closes session id if nothing used it since its timer was armed after use uses.
func (l *sessionLimiter) expire(id string, uses int) {
	l.mu.Lock()
	s := l.sessions[id]
	if s == nil || s.inFlight > 0 || s.uses != uses {
		l.mu.Unlock()
		return
	}
	l.forgetLocked(id)
	l.mu.Unlock()
	// Closed through the SDK's own DELETE, which frees its state and ends its streams.
	del, _ := http.NewRequest(http.MethodDelete, "/mcp", nil)
	del.Header.Set(sessionIDHeader, id)
	l.next.ServeHTTP(&statusWriter{ResponseWriter: discard{}}, del)
}

func (l *sessionLimiter) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgetLocked(id)
}

func (l *sessionLimiter) forgetLocked(id string) {
	s := l.sessions[id]
	if s == nil {
		return
	}
	if s.idle != nil {
		s.idle.Stop()
	}
	delete(l.sessions, id)
	l.releaseLocked(s.user)
}

func (l *sessionLimiter) releaseLocked(user string) {
	if l.perUser[user]--; l.perUser[user] <= 0 {
		delete(l.perUser, user)
	}
}

// refuse answers 429 with a JSON-RPC error, which MCP clients show to their user.
func refuse(w http.ResponseWriter, r *http.Request, msg string) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if r.Body != nil {
		_ = json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req)
	}
	if len(req.ID) == 0 {
		req.ID = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": req.ID,
		"error": map[string]any{"code": -32000, "message": msg},
	})
}

// statusWriter remembers the status the SDK answered; Unwrap lets the SDK flush streams.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// headerHook calls hook once, with the headers, just before they are written.
type headerHook struct {
	http.ResponseWriter
	hook  func(http.Header)
	fired bool
}

func (h *headerHook) fire() {
	if !h.fired {
		h.fired = true
		h.hook(h.Header())
	}
}

func (h *headerHook) WriteHeader(code int) {
	h.fire()
	h.ResponseWriter.WriteHeader(code)
}

func (h *headerHook) Write(b []byte) (int, error) {
	h.fire()
	return h.ResponseWriter.Write(b)
}

// Flush is found before Unwrap by http.ResponseController, so a flush of unwritten headers
// fires the hook too.
func (h *headerHook) Flush() {
	h.fire()
	_ = http.NewResponseController(h.ResponseWriter).Flush()
}

func (h *headerHook) Unwrap() http.ResponseWriter { return h.ResponseWriter }

type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
