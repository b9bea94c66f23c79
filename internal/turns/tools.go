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

package turns

import (
	"context"
	"encoding/json"
	"fmt"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// tool is a function offered to the model and executed in-process.
type tool struct {
	def provider.Tool
	// session marks the session tools, which sub-agent sessions do not get.
	session bool
	// memory marks the memory tools, offered only when the Agent enables memory.
	memory bool
	// family names the remote tools of an Agent ("mcp" for its MCP servers', "a2a" for its
	// remote A2A agents): their names are the remotes' to choose, so each family is one
	// metric series.
	family string
	run    func(ctx context.Context, c *toolCall) (any, error)
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
	// sandbox are the tools of a sandboxed session's sandbox, when src.Sandboxes is set.
	sandbox []*tool
	// sandboxWorkspace are workspace_list and workspace_read of a sandboxed sub-agent
	// session, over its sandbox.
	sandboxWorkspace []*tool
	// plain are the built-in tools of a session [0] and of a sub-agent session [1] whose
	// turns get nothing else, assembled once.
	plain [2]builtinTools
}

func newToolset(tools ...*tool) toolset {
	ts := toolset{builtin: tools}
	// No sources yet and an Agent that narrows nothing: the built-in tools alone.
	for i, sub := range []bool{false, true} {
		ts.plain[i].defs, ts.plain[i].offered = ts.assemble(context.Background(), &sessionsv1alpha1.Agent{}, &sessionsv1alpha1.AgentSession{}, sub)
	}
	return ts
}

// sessionTools are the seeds' session tools, from internal/sessiontools.
func sessionTools() toolset {
	all := sessiontools.All()
	tools := make([]*tool, 0, len(all))
	for _, st := range all {
		tools = append(tools, &tool{session: true, memory: st.Memory,
			def: provider.Tool{Name: st.Name, Description: st.Description, Parameters: st.Schema},
			run: func(ctx context.Context, c *toolCall) (any, error) { return st.Run(ctx, c.sessionCall(), c.args) }})
	}
	return newToolset(tools...)
}

// sessionCall is a session tool's call as the calling session, with the manager's clients.
// What it creates carries the turn's owner, the hop count and the trace link.
func (c *toolCall) sessionCall() *sessiontools.Call {
	return &sessiontools.Call{Env: &c.e.toolEnv, Namespace: c.req.Namespace, Session: c.session, Agent: c.agent,
		ID: c.req.ID + "/" + c.callID(), Stamp: c.stamp, EmbeddingsGate: c.embeddingsGate()}
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
	if tl.family != "" {
		label = tl.family
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
	return string(b), sessiontools.Refused(out)
}

func outcome(isErr bool) string {
	if isErr {
		return toolError
	}
	return toolOK
}

// errorResult is the JSON result of a failed call, in the seeds' {status, error} shape.
func errorResult(err error) string { return sessiontools.ErrorResult(err) }

// toolDef is a tool's definition as offered to the model.
func toolDef(name, description string, props map[string]any, required ...string) provider.Tool {
	return provider.Tool{Name: name, Description: description, Parameters: sessiontools.Schema(props, required...)}
}
