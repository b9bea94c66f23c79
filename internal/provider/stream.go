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

package provider

import (
	"errors"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/sse"
)

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

// nextEvent reads the next stream event; an over-long line is the server's fault, so it is a
// malformed response rather than a transport error.
func nextEvent(r *sse.Reader) (sse.Event, error) {
	ev, err := r.Next()
	if errors.Is(err, sse.ErrLineTooLong) {
		return ev, malformed("event stream line longer than %d bytes", sse.MaxLine)
	}
	return ev, err
}
