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

package sse

import (
	"bytes"
	"net/http"
	"time"

	"k8s.io/utils/clock"
)

// WriteTimeout bounds one write to a stream's client: a stuck client must not pin the
// handler forever.
const WriteTimeout = 30 * time.Second

// deadlineSlack is how far a write's deadline may fall short of WriteTimeout. Moving the
// connection's deadline re-arms a runtime timer; with a busy session fanned out to many
// followers that was a measurable share of each delivery, so it moves at most once per slack.
const deadlineSlack = time.Second

// nextWriteDeadline says whether a write starting at now needs a new deadline, given the one
// set (cur, zero when none), and returns it. Every write gets at least
// WriteTimeout-deadlineSlack and at most WriteTimeout.
func nextWriteDeadline(cur, now time.Time) (time.Time, bool) {
	if left := cur.Sub(now); !cur.IsZero() && left >= WriteTimeout-deadlineSlack && left <= WriteTimeout {
		return cur, false
	}
	return now.Add(WriteTimeout), true
}

// Writer writes a stream's events to its response: Buf collects what the next Flush sends
// in one write, within WriteTimeout of the write's start.
type Writer struct {
	Buf      bytes.Buffer
	w        http.ResponseWriter
	rc       *http.ResponseController
	clock    clock.PassiveClock
	deadline time.Time // set on the connection; zero before the first write
}

// NewWriter writes to w, its deadlines from clk.
func NewWriter(w http.ResponseWriter, clk clock.PassiveClock) *Writer {
	return &Writer{w: w, rc: http.NewResponseController(w), clock: clk}
}

// Flush writes and flushes what Buf holds, and says whether the client took it. The
// connection's deadline moves only when nextWriteDeadline says so.
func (s *Writer) Flush() bool {
	if s.Buf.Len() == 0 {
		return true
	}
	if next, ok := nextWriteDeadline(s.deadline, s.clock.Now()); ok && s.rc.SetWriteDeadline(next) == nil {
		s.deadline = next
	}
	_, err := s.w.Write(s.Buf.Bytes())
	s.Buf.Reset()
	if err == nil {
		err = s.rc.Flush()
	}
	return err == nil
}
