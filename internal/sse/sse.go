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

// Package sse reads text/event-stream bodies (model providers' streams, the history API's
// follow stream) and writes the streams the operator serves (Writer).
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// MaxLine bounds one line; model streams send tool call arguments as many small deltas and
// the history API sends one record per line, so real lines are far shorter.
const MaxLine = 4 << 20

// ErrLineTooLong is returned for a line longer than MaxLine.
var ErrLineTooLong = errors.New("sse: event stream line too long")

// Event is one dispatched server-sent event.
type Event struct {
	Event string
	Data  []byte
	// ID is the stream's last event ID when the event was dispatched (the "id" field
	// persists until the next one sets it, as the spec says): what a client sends back as
	// Last-Event-ID.
	ID string
}

// Reader splits a text/event-stream body into events, following the
// WHATWG framing rules: "field: value" lines, data
// lines joined by "\n", comments skipped, an empty line dispatches. It is
// small enough that a library would add more than it saves.
type Reader struct {
	s     *bufio.Scanner
	event string
	data  []byte
	has   bool
	id    string
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 4096), MaxLine)
	s.Split(scanLines)
	return &Reader{s: s}
}

// Next returns the next event with data, or io.EOF after the last one. An
// event cut off by the end of the stream is still returned: some
// OpenAI-compatible servers omit the final blank line.
func (r *Reader) Next() (Event, error) {
	for r.s.Scan() {
		line := r.s.Bytes()
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			r.event = string(value)
		case "id":
			if !bytes.ContainsRune(value, 0) {
				r.id = string(value)
			}
		case "data":
			if r.has {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			r.has = true
		}
	}
	if err := r.s.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, ErrLineTooLong
		}
		return Event{}, err
	}
	if ev, ok := r.dispatch(); ok {
		return ev, nil
	}
	return Event{}, io.EOF
}

func (r *Reader) dispatch() (Event, bool) {
	ev, ok := Event{Event: r.event, Data: r.data, ID: r.id}, r.has
	r.event, r.data, r.has = "", nil, false
	return ev, ok
}

// scanLines splits on "\r\n", "\n" or a lone "\r", as the SSE spec allows.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// A "\r" at the end of the buffer may be the first half of "\r\n".
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
