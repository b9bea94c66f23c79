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

package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
)

// tool is a function offered to the model and executed in-process.
type tool struct {
	def provider.Tool
	// session marks the session tools, which sub-agent sessions do not get.
	session bool
	// mcp marks a tool of an Agent's MCP server.
	mcp bool
	run func(ctx context.Context, c *toolCall) (any, error)
}

// toolCall is one call of a tool within a turn.
type toolCall struct {
	*turn
	args json.RawMessage
}

// callID names the call within its turn: the same on every run of the turn, so objects a
// tool creates are named from it and a repeated turn finds them instead of creating twice.
func (c *toolCall) callID() string { return c.key() }

// toolset is the engine's built-in tools and the sources of the others (MCP servers,
// workspaces); forTurn assembles what one turn is offered.
type toolset struct {
	builtin []*tool
	src     ToolSources
}

func newToolset(tools ...*tool) toolset { return toolset{builtin: tools} }

// sessionTools are the seeds' session tools.
func sessionTools() toolset {
	return newToolset(listTool(), historyTool(), sendTool(), spawnTool(), agentsListTool())
}

// toolText is a tool's result that is already the text the model reads (MCP results),
// with its error flag; run passes it through instead of encoding it as JSON.
type toolText struct {
	text  string
	isErr bool
}

// run executes a call and returns its result text and whether it is an error. A tool the
// turn was not offered is an error result, not a turn failure: the model may recover.
func (ts *toolset) run(ctx context.Context, t *turn, call *provider.ToolCall) (string, bool) {
	tl, ok := t.offered[call.Name]
	if !ok {
		toolCallsTotal.WithLabelValues("unknown", toolError).Inc()
		return errorResult(fmt.Errorf("unknown tool %q", call.Name)), true
	}
	label := call.Name
	if tl.mcp {
		label = "mcp" // one series for every MCP tool: their names are the servers' to choose
	}
	began := t.e.now()
	ctx, span := startToolSpan(ctx, call)
	text, isErr := runTool(ctx, tl, t, call)
	endToolSpan(span, isErr, text)
	toolCallsTotal.WithLabelValues(label, outcome(isErr)).Inc()
	toolCallDuration.WithLabelValues(label, outcome(isErr)).Observe(t.e.now().Sub(began).Seconds())
	return text, isErr
}

// runTool runs an offered tool and renders its result for the model.
func runTool(ctx context.Context, tl *tool, t *turn, call *provider.ToolCall) (string, bool) {
	out, err := tl.run(ctx, &toolCall{turn: t, args: call.Arguments})
	if err != nil {
		return errorResult(err), true
	}
	if r, ok := out.(toolText); ok {
		return r.text, r.isErr
	}
	b, err := json.Marshal(out)
	if err != nil {
		return errorResult(err), true
	}
	return string(b), false
}

func outcome(isErr bool) string {
	if isErr {
		return toolError
	}
	return toolOK
}

// errorResult is the JSON result of a failed call, in the seeds' {status, error} shape.
func errorResult(err error) string {
	b, _ := json.Marshal(statusResult{Status: statusError, Error: err.Error()})
	return string(b)
}

// Result statuses of the seeds, plus forbidden for an admission denial.
const (
	statusAccepted  = "accepted"
	statusOK        = "ok"
	statusTimeout   = "timeout"
	statusError     = "error"
	statusForbidden = "forbidden"
)

// statusResult is the {runId?, status, reply?, error?} result of sessions_send and of
// failed calls.
type statusResult struct {
	RunID  string `json:"runId,omitempty"`
	Status string `json:"status"`
	Reply  string `json:"reply,omitempty"`
	Error  string `json:"error,omitempty"`
}

// decodeArgs decodes a call's arguments into v; null or empty arguments are {}.
func decodeArgs(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

// number is a numeric argument; models also send numbers as strings ("10"), which are
// accepted. Fractions are cut toward zero.
type number struct {
	set bool
	v   int64
}

func (n *number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%s is not a number", b)
	}
	n.set, n.v = true, int64(math.Max(math.Min(f, math.MaxInt32), math.MinInt32))
	return nil
}

// or returns the number, or def when it was not given.
func (n number) or(def int64) int64 {
	if !n.set {
		return def
	}
	return n.v
}

// clamp bounds v to lo..hi.
func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

// schema builds a tool's JSON schema from its properties and required names.
func schema(props map[string]any, required ...string) json.RawMessage {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // static input
	}
	return b
}

// toolDef is a tool's definition as offered to the model.
func toolDef(name, description string, props map[string]any, required ...string) provider.Tool {
	return provider.Tool{Name: name, Description: description, Parameters: schema(props, required...)}
}
