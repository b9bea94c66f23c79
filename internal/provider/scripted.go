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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// Placeholders of scripted replies and tool call arguments.
const (
	placeholderInput       = "{{input}}"
	placeholderToolResults = "{{toolResults}}"
)

// MaxScriptDelay is the longest a scripted rule may wait; a longer delay is clamped to it
// (the API refuses one too). A rule holding a turn for a year holds an executor slot too.
const MaxScriptDelay = 10 * time.Minute

// scripted answers from rules compiled once in New; Complete allocates only
// what the Response itself needs, because benchmarks use it to measure the
// runtime's own overhead.
type scripted struct {
	model string
	clock clock.WithTicker
	rules []scriptRule
	echo  scriptRule
}

type scriptRule struct {
	re        *regexp.Regexp // nil matches anything
	reply     template
	toolCalls []scriptCall
	delay     time.Duration
}

type scriptCall struct {
	name string
	args json.RawMessage
	// tree is the decoded args when a string value holds {{input}}; nil
	// means args are sent as they are.
	tree any
	// inputs counts the {{input}} placeholders in tree, to bound the expansion up front.
	inputs int
}

func newScripted(cfg Config) (*scripted, error) {
	p := &scripted{model: cfg.Model, clock: cfg.Clock, echo: scriptRule{reply: compileTemplate("echo: " + placeholderInput)}}
	if p.model == "" {
		p.model = Scripted
	}
	p.rules = make([]scriptRule, len(cfg.Script))
	for i, r := range cfg.Script {
		sr := &p.rules[i]
		if r.Match != "" {
			re, err := regexp.Compile(r.Match)
			if err != nil {
				return nil, fmt.Errorf("scripted provider: rule %d: match %q is not a valid RE2 expression: %w", i, r.Match, err)
			}
			sr.re = re
		}
		if r.Delay < 0 {
			return nil, fmt.Errorf("scripted provider: rule %d: delay %s is negative", i, r.Delay)
		}
		sr.delay, sr.reply = min(r.Delay, MaxScriptDelay), compileTemplate(r.Reply)
		for j, tc := range r.ToolCalls {
			if tc.Name == "" {
				return nil, fmt.Errorf("scripted provider: rule %d: tool call %d has no name", i, j)
			}
			call := scriptCall{name: tc.Name, args: argsOrEmpty(tc.Arguments)}
			if !json.Valid(call.args) {
				return nil, fmt.Errorf("scripted provider: rule %d: tool call %q: arguments are not valid JSON", i, tc.Name)
			}
			if bytes.Contains(call.args, []byte(placeholderInput)) {
				d := json.NewDecoder(bytes.NewReader(call.args))
				d.UseNumber() // keep numbers exactly as written
				if err := d.Decode(&call.tree); err != nil {
					return nil, fmt.Errorf("scripted provider: rule %d: tool call %q: %w", i, tc.Name, err)
				}
				if call.inputs = countInputs(call.tree); call.inputs == 0 {
					call.tree = nil // only in a key, which is left alone
				}
			}
			sr.toolCalls = append(sr.toolCalls, call)
		}
	}
	return p, nil
}

func (p *scripted) Name() string { return Scripted }

func (p *scripted) Complete(ctx context.Context, req Request) (*Response, error) {
	msgs := req.Messages
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser {
			last = i
			break
		}
	}
	var input string
	if last >= 0 {
		input = msgs[last].Text
	}
	rule := p.match(input)
	if err := p.wait(ctx, rule.delay); err != nil {
		return nil, err
	}

	inBytes, priorCalls, results := len(req.System)+len(req.Summary), 0, 0
	for i := range msgs {
		m := &msgs[i]
		inBytes += len(m.Text)
		for _, tc := range m.ToolCalls {
			inBytes += len(tc.Arguments)
		}
		priorCalls += len(m.ToolCalls)
		if i > last && m.Role == RoleTool {
			results++
		}
	}
	model := req.Model
	if model == "" {
		model = p.model
	}
	resp := &Response{Model: model, Usage: Usage{InputTokens: tokens(inBytes)}}

	if len(rule.toolCalls) > 0 && results == 0 {
		resp.ToolCalls = make([]ToolCall, len(rule.toolCalls))
		outBytes := 0
		for i := range rule.toolCalls {
			c := &rule.toolCalls[i]
			args := c.args // shared with the rule, not copied: callers only read it
			if c.tree != nil {
				if size := len(c.args) + c.inputs*len(input); size > MaxOutputText {
					return nil, &Error{Provider: Scripted, Type: ErrBadRequest,
						Message: fmt.Sprintf("tool call %q: arguments would expand to %d bytes, more than %d", c.name, size, MaxOutputText)}
				}
				var err error
				if args, err = marshalArgs(substitute(c.tree, input)); err != nil {
					return nil, err
				}
			}
			resp.ToolCalls[i] = ToolCall{ID: "call_" + strconv.Itoa(priorCalls+i+1), Name: c.name, Arguments: args}
			outBytes += len(args)
		}
		resp.StopReason = StopReasonToolCalls
		resp.Usage.OutputTokens = tokens(outBytes)
		return resp, nil
	}

	var toolResults string
	if rule.reply.uses(holeToolResults) && results > 0 {
		toolResults = joinToolResults(msgs[last+1:], results)
	}
	resp.Text = rule.reply.render(input, toolResults)
	resp.StopReason = StopReasonStop
	capOutput(resp)
	resp.Usage.OutputTokens = tokens(len(resp.Text))
	return resp, nil
}

func (p *scripted) match(input string) *scriptRule {
	for i := range p.rules {
		if r := &p.rules[i]; r.re == nil || r.re.MatchString(input) {
			return r
		}
	}
	return &p.echo
}

// wait plays the model's latency on the injected clock.
func (p *scripted) wait(ctx context.Context, d time.Duration) error {
	if ctx.Err() != nil {
		return ctxError(ctx, Scripted, "")
	}
	if d <= 0 {
		return nil
	}
	t := p.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctxError(ctx, Scripted, "")
	case <-t.C():
		return nil
	}
}

// tokens counts a token per 4 bytes, rounded up.
func tokens(n int) int64 { return int64((n + 3) / 4) }

// joinToolResults joins the texts of the n tool messages in msgs with "\n".
func joinToolResults(msgs []Message, n int) string {
	size := n - 1
	for i := range msgs {
		if msgs[i].Role == RoleTool {
			if n == 1 {
				return msgs[i].Text
			}
			size += len(msgs[i].Text)
		}
	}
	var b strings.Builder
	b.Grow(size)
	first := true
	for i := range msgs {
		if msgs[i].Role != RoleTool {
			continue
		}
		if !first {
			b.WriteByte('\n')
		}
		b.WriteString(msgs[i].Text)
		first = false
	}
	return b.String()
}

// countInputs counts {{input}} in the string values of v.
func countInputs(v any) int {
	n := 0
	switch v := v.(type) {
	case string:
		n = strings.Count(v, placeholderInput)
	case []any:
		for _, e := range v {
			n += countInputs(e)
		}
	case map[string]any:
		for _, e := range v {
			n += countInputs(e)
		}
	}
	return n
}

// substitute copies v with {{input}} replaced in every string value.
func substitute(v any, input string) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, placeholderInput, input)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = substitute(e, input)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = substitute(e, input)
		}
		return out
	}
	return v
}

// marshalArgs encodes arguments without HTML escaping, so "<" stays "<".
func marshalArgs(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("scripted provider: encoding tool call arguments: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// template is a reply split at its placeholders once, so rendering is one
// allocation and substituted text is never scanned again.
type template []segment

type hole uint8

const (
	holeNone hole = iota
	holeInput
	holeToolResults
)

type segment struct {
	lit  string
	hole hole
}

func compileTemplate(s string) template {
	var t template
	for {
		i, h, n := strings.Index(s, placeholderInput), holeInput, len(placeholderInput)
		if j := strings.Index(s, placeholderToolResults); j >= 0 && (i < 0 || j < i) {
			i, h, n = j, holeToolResults, len(placeholderToolResults)
		}
		if i < 0 {
			if s != "" || len(t) == 0 {
				t = append(t, segment{lit: s})
			}
			return t
		}
		if i > 0 {
			t = append(t, segment{lit: s[:i]})
		}
		t = append(t, segment{hole: h})
		s = s[i+n:]
	}
}

func (t template) uses(h hole) bool {
	for _, s := range t {
		if s.hole == h {
			return true
		}
	}
	return false
}

// render fills the holes, writing MaxOutputText+1 bytes at most: a reply of {{input}} 400
// times to a 64 KiB message would otherwise be a 26 MB string (capOutput then cuts it).
func (t template) render(input, toolResults string) string {
	if len(t) == 1 && t[0].hole == holeNone {
		return t[0].lit
	}
	n := 0
	for _, s := range t {
		switch s.hole {
		case holeNone:
			n += len(s.lit)
		case holeInput:
			n += len(input)
		case holeToolResults:
			n += len(toolResults)
		}
	}
	limit := MaxOutputText + 1
	var b strings.Builder
	b.Grow(min(n, limit))
	for _, s := range t {
		part := s.lit
		switch s.hole {
		case holeInput:
			part = input
		case holeToolResults:
			part = toolResults
		}
		if room := limit - b.Len(); len(part) > room {
			b.WriteString(part[:room])
			break
		}
		b.WriteString(part)
	}
	return b.String()
}
