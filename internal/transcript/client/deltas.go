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

package client

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Live reply pieces are best effort: a turn never waits for them. Text is coalesced to one
// piece per DeltaInterval (or MaxDeltaText) per model call, at most deltaQueue pieces wait
// for the one sender, and a piece that finds the queue full or the store slow is dropped.
const (
	DeltaInterval = 75 * time.Millisecond
	deltaQueue    = 64
	deltaTimeout  = 2 * time.Second
)

type deltaPost struct {
	path string
	body []byte
}

// LiveReply returns the writer of one model call's reply pieces in a session.
func (c *Client) LiveReply(namespace, sessionID, runID string, step int) transcript.ReplyWriter {
	c.deltasOnce.Do(func() {
		c.deltas = make(chan deltaPost, deltaQueue)
		go c.sendDeltas()
	})
	return &DeltaWriter{c: c, path: sessionPath(namespace, sessionID, transcript.APIDeltaPath), d: transcript.Delta{RunID: runID, Step: step}}
}

// sendDeltas posts the queued pieces one at a time, for the life of the client.
func (c *Client) sendDeltas() {
	for p := range c.deltas {
		ctx, cancel := context.WithTimeout(context.Background(), deltaTimeout)
		if resp, err := c.once(ctx, http.MethodPost, p.path, p.body); err == nil {
			_ = resp.Body.Close()
		}
		cancel()
	}
}

// DeltaWriter coalesces the text a provider streams into Deltas. Safe for concurrent use.
type DeltaWriter struct {
	c    *Client
	path string

	mu   sync.Mutex
	d    transcript.Delta
	buf  strings.Builder
	last time.Time
}

// Write adds text, sending what is gathered once DeltaInterval has passed since the last
// piece or MaxDeltaText is reached.
func (w *DeltaWriter) Write(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.WriteString(text)
	if w.buf.Len() >= transcript.MaxDeltaText || w.c.Clock.Since(w.last) >= DeltaInterval {
		w.flushLocked()
	}
}

// Flush sends what is gathered; call it when the model call ends.
func (w *DeltaWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

func (w *DeltaWriter) flushLocked() {
	s := w.buf.String()
	w.buf.Reset()
	for s != "" {
		n := cutAt(s, transcript.MaxDeltaText)
		w.d.Seq++
		w.d.Text = s[:n]
		s = s[n:]
		body, _ := json.Marshal(w.d)
		select {
		case w.c.deltas <- deltaPost{path: w.path, body: body}:
		default: // the store is behind: the piece is dropped, the seq gap tells
		}
	}
	w.last = w.c.Clock.Now()
}

// cutAt is the length of s's longest prefix of at most n bytes that ends on a rune boundary.
func cutAt(s string, n int) int {
	if len(s) <= n {
		return len(s)
	}
	for i := n; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n // no boundary near: cut anywhere rather than loop
}
