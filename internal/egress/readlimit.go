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

package egress

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
)

// The read limits of the manager's peers: what one answer of each may be before the
// manager stops reading it and fails the call. They bound the bytes read, before any SDK or
// decoder sees them, so a peer that answers without end costs the manager this much at most.
const (
	// DefaultA2AReadLimit bounds one answer of a remote A2A agent (spec.tools.a2aAgents),
	// its agent card included, whole or streamed (--a2a-read-limit).
	DefaultA2AReadLimit = 8 << 20
	// DefaultMCPReadLimit bounds one answer of an MCP server (spec.tools.mcpServers): a JSON
	// response, or one event of an event stream, whose stream may stay open for the
	// session's life (--mcp-read-limit).
	DefaultMCPReadLimit = 8 << 20
	// DefaultSinkReadLimit bounds the answer of a delivery sink (a webhook or chat platform).
	DefaultSinkReadLimit = 1 << 20
	// DefaultEventLimit bounds one server-sent event of any peer's event stream.
	DefaultEventLimit = 4 << 20
)

// ReadLimit is how much of a peer's answers is read before the call fails.
type ReadLimit struct {
	// Peer names the peer in the error: "remote A2A agent", "MCP server", "sink".
	Peer string
	// Setting names what raises the limit (a flag), for the error; "" names none.
	Setting string
	// Body bounds the bytes of one response body that is not an event stream (0: none).
	Body int64
	// Stream bounds the bytes of one event stream (text/event-stream) as a whole (0: none,
	// for a stream that may stay open as long as its session).
	Stream int64
	// Event bounds one event of an event stream (0: none).
	Event int64
}

// A2ALimit is the read limit of a remote A2A agent: n bytes of one answer or stream, its
// card included (0: DefaultA2AReadLimit).
func A2ALimit(n int64) ReadLimit {
	n = orDefault(n, DefaultA2AReadLimit)
	return ReadLimit{Peer: "remote A2A agent", Setting: "--a2a-read-limit", Body: n, Stream: n, Event: min(n, DefaultEventLimit)}
}

// MCPLimit is the read limit of an MCP server: n bytes of one JSON answer or of one event
// (0: DefaultMCPReadLimit). Its event stream as a whole is not bounded: it may stay open
// for the session's life; the call's timeout bounds a call that never ends.
func MCPLimit(n int64) ReadLimit {
	n = orDefault(n, DefaultMCPReadLimit)
	return ReadLimit{Peer: "MCP server", Setting: "--mcp-read-limit", Body: n, Event: n}
}

// SinkLimit is the read limit of a delivery sink's answer.
func SinkLimit() ReadLimit {
	return ReadLimit{Peer: "sink", Body: DefaultSinkReadLimit, Stream: DefaultSinkReadLimit, Event: DefaultSinkReadLimit}
}

func orDefault(n, def int64) int64 {
	if n <= 0 {
		return def
	}
	return n
}

// ReadLimitError is an answer the manager stopped reading at its peer's limit.
type ReadLimitError struct {
	Peer, Setting string
	// What was bounded: "answer", "stream" or "event".
	What  string
	Limit int64
}

func (e *ReadLimitError) Error() string {
	s := fmt.Sprintf("the %s's %s passed the read limit of %s", e.Peer, e.What, bytesText(e.Limit))
	if e.Setting != "" {
		s += " (" + e.Setting + ")"
	}
	return s + ": the rest was not read"
}

// bytesText is n in the largest binary unit that divides it.
func bytesText(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// LimitBodies returns a RoundTripper that hands every response of next on with its body
// bounded by l: a read past a limit fails with a *ReadLimitError, whatever reads the body
// (an SDK's JSON decoder, an SSE scanner), so what a peer sends is bounded before it is
// decoded. An event stream past l.Stream ends at the end of the event that crossed it (at
// most l.Event more), then fails. It adds no buffering of its own.
func LimitBodies(next http.RoundTripper, l ReadLimit) http.RoundTripper {
	if l.Stream > 0 && l.Event <= 0 {
		// A stream past its limit is cut at an event's end: an event must end in time.
		l.Event = l.Stream
	}
	return limitTransport{next: next, l: l}
}

// Limiter is LimitBodies for one peer that remembers the limit it last enforced: an SDK
// that reports a cut-off body as a lost connection ("EOF", "terminated without response")
// is then corrected by the peer's client with Cut, so the call's error names the limit.
type Limiter struct {
	limitTransport
	mu  sync.Mutex
	cut error
}

// NewLimiter is LimitBodies(next, l) with a memory of what it cut.
func NewLimiter(next http.RoundTripper, l ReadLimit) *Limiter {
	lim := &Limiter{}
	lim.limitTransport = LimitBodies(next, l).(limitTransport)
	lim.onCut = func(err error) {
		lim.mu.Lock()
		lim.cut = err
		lim.mu.Unlock()
	}
	return lim
}

// Cut returns the limit error it enforced since the last Cut, and forgets it; nil when
// none.
func (l *Limiter) Cut() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.cut
	l.cut = nil
	return err
}

type limitTransport struct {
	next  http.RoundTripper
	l     ReadLimit
	onCut func(error)
}

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.Body == http.NoBody {
		return resp, err
	}
	b := &limitedBody{rc: resp.Body, l: t.l, left: t.l.Body, what: "answer", onCut: t.onCut}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		b.left, b.what, b.eventLeft = t.l.Stream, "stream", t.l.Event
	}
	resp.Body = b
	return resp, nil
}

// limitedBody reads rc until left (0: no bound) and, in an event stream, until eventLeft
// bytes pass without the blank line that ends an event.
type limitedBody struct {
	rc        io.ReadCloser
	l         ReadLimit
	what      string
	left      int64
	eventLeft int64
	// eventRead counts the bytes of the current event; last holds the stream's last byte
	// (and the one before, for "\r\n"), to see an event's end split across reads.
	eventRead int64
	last      [2]byte
	err       error
	onCut     func(error)
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	stream := b.what == "stream"
	limit := b.l.Body
	if stream {
		limit = b.l.Stream
	}
	switch {
	case limit > 0 && !stream && b.left <= 0:
		// Read one byte more to tell a body of exactly the limit from a longer one.
		var one [1]byte
		if n, err := b.rc.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, b.fail(b.what, limit)
	case limit > 0 && !stream && int64(len(p)) > b.left:
		p = p[:b.left]
	case limit > 0 && stream && b.left <= 0 && b.eventRead == 0:
		return 0, b.fail(b.what, limit)
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if !stream || n == 0 {
		return n, err
	}
	end, ferr := b.countEvents(p[:n])
	if ferr != nil {
		return n, ferr
	}
	if limit > 0 && b.left <= 0 && end >= 0 {
		// A stream past its limit ends at an event's end, so a reader of events sees whole
		// ones and then the error, not a torn event.
		// The error is kept in b.err for the next Read; this one hands over the whole events.
		_ = b.fail(b.what, limit)
		return end, nil
	}
	return n, err
}

// countEvents follows the events in chunk: an event ends at a blank line ("\n\n" or
// "\r\n\r\n"; a lone "\r" line end is not seen and only makes the count stricter). end is
// the offset just past the first event end in chunk, -1 when none; an event over the event
// limit is an error.
func (b *limitedBody) countEvents(chunk []byte) (end int, err error) {
	end = -1
	prev, off := b.last, 0
	for off < len(chunk) {
		i := bytes.IndexByte(chunk[off:], '\n')
		if i < 0 {
			b.eventRead += int64(len(chunk) - off)
			prev = tail(prev, chunk[off:])
			break
		}
		line := chunk[off : off+i+1]
		if b.eventRead += int64(len(line)); b.eventLeft > 0 && b.eventRead > b.eventLeft {
			return end, b.fail("event", b.eventLeft)
		}
		// A blank line: "\n" right after a "\n", or "\r\n" right after a "\n".
		before := tail(prev, line[:i])
		if before[1] == '\n' || (before[1] == '\r' && before[0] == '\n') {
			b.eventRead = 0
			if end < 0 {
				end = off + i + 1
			}
		}
		prev = tail(prev, line)
		off += i + 1
	}
	b.last = prev
	if b.eventLeft > 0 && b.eventRead > b.eventLeft {
		return end, b.fail("event", b.eventLeft)
	}
	return end, nil
}

// tail is the last two bytes of prev followed by s.
func tail(prev [2]byte, s []byte) [2]byte {
	switch len(s) {
	case 0:
		return prev
	case 1:
		return [2]byte{prev[1], s[0]}
	}
	return [2]byte{s[len(s)-2], s[len(s)-1]}
}

func (b *limitedBody) fail(what string, limit int64) error {
	b.err = &ReadLimitError{Peer: b.l.Peer, Setting: b.l.Setting, What: what, Limit: limit}
	if b.onCut != nil {
		b.onCut(b.err)
	}
	return b.err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
