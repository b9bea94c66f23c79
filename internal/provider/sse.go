/*
Copyright 2026 The agent-session-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package provider

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// maxSSELine bounds one SSE line; a tool call's arguments arrive as many
// small deltas, so real lines are far shorter.
const maxSSELine = 4 << 20

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Event string
	Data  []byte
}

// sseReader splits a text/event-stream body into events, following the
// WHATWG framing rules the two vendors rely on: "field: value" lines, data
// lines joined by "\n", comments skipped, an empty line dispatches. It is
// small enough that a library would add more than it saves.
type sseReader struct {
	s     *bufio.Scanner
	event string
	data  []byte
	has   bool
}

func newSSEReader(r io.Reader) *sseReader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 4096), maxSSELine)
	s.Split(scanSSELines)
	return &sseReader{s: s}
}

// Next returns the next event with data, or io.EOF after the last one. An
// event cut off by the end of the stream is still returned: some
// OpenAI-compatible servers omit the final blank line.
func (r *sseReader) Next() (sseEvent, error) {
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
			return sseEvent{}, malformed("event stream line longer than %d bytes", maxSSELine)
		}
		return sseEvent{}, err
	}
	if ev, ok := r.dispatch(); ok {
		return ev, nil
	}
	return sseEvent{}, io.EOF
}

func (r *sseReader) dispatch() (sseEvent, bool) {
	ev, ok := sseEvent{Event: r.event, Data: r.data}, r.has
	r.event, r.data, r.has = "", nil, false
	return ev, ok
}

// scanSSELines splits on "\r\n", "\n" or a lone "\r", as the SSE spec allows.
func scanSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
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

// callBuilder gathers one tool call from stream deltas.
type callBuilder struct {
	id, name string
	args     strings.Builder
}

// callBuilders holds stream tool calls by the index the deltas carry.
type callBuilders []*callBuilder

// maxStreamIndex bounds the index a stream may name, so a hostile or broken
// server cannot make us allocate without limit.
const maxStreamIndex = 1024

// add merges one delta into the call at index i; empty parts leave what
// earlier deltas said.
func (b *callBuilders) add(i int, id, name, args string) error {
	if i < 0 || i > maxStreamIndex {
		return malformed("stream index %d out of range", i)
	}
	for len(*b) <= i {
		*b = append(*b, nil)
	}
	c := (*b)[i]
	if c == nil {
		c = &callBuilder{}
		(*b)[i] = c
	}
	if id != "" {
		c.id = id
	}
	if name != "" {
		c.name = name
	}
	c.args.WriteString(args)
	return nil
}

func (b callBuilders) toolCalls() []ToolCall {
	var out []ToolCall
	for _, c := range b {
		if c == nil || (c.id == "" && c.name == "") {
			continue // an index used by text, or one the server skipped
		}
		out = append(out, ToolCall{ID: c.id, Name: c.name, Arguments: toolArgs(c.args.String())})
	}
	return out
}
