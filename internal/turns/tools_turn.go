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
	"path/filepath"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// ToolSources are where the tools beyond the session tools come from.
type ToolSources struct {
	// MCP resolves Agents' MCP tool servers; nil offers no MCP tools. The manager shares
	// one pool between the engine and the Agent reconciler.
	MCP *mcptools.Pool
	// A2A reads Agents' remote A2A agents' cards and calls them; nil offers none.
	A2A *a2atools.Client
	// WorkspaceRoot holds the sub-agent workspaces, <root>/<namespace>/<sessionId>, where
	// attachments land; empty offers no workspace tools.
	WorkspaceRoot string
	// Sandboxes gives sandboxed sessions their sandbox and its tools (exec, read, write,
	// edit, ls); nil offers them to no session.
	Sandboxes Sandboxes
}

// WorkspaceDir is the workspace of a sub-agent session.
func WorkspaceDir(root, namespace, sessionID string) string {
	return filepath.Join(root, namespace, sessionID)
}

// isSubagent says whether s is a sub-agent session, which gets no session tools unless its
// Agent's subagents.tools names them.
func isSubagent(s *sessionsv1alpha1.AgentSession) bool {
	if s.Spec.SpawnedBy != "" {
		return true
	}
	k, err := sessionkey.Parse(s.Spec.Key)
	return err == nil && k.Subagent
}

// forTurn assembles the tools a turn is offered, in a stable order. A session gets the
// built-in tools, its Agent's MCP tools and its remote A2A agents. A sub-agent session gets
// what policy.SubagentOffers allows: by default every non-session tool, else the tools its
// Agent's spec.subagents.tools names, session tools included but never sessions_spawn; and
// workspace_list / workspace_read over its own workspace.
// The result is shared with other turns: read it, never modify it.
func (ts *toolset) forTurn(ctx context.Context, agent *sessionsv1alpha1.Agent, s *sessionsv1alpha1.AgentSession) ([]provider.Tool, map[string]*tool) {
	sub := isSubagent(s)
	if !ts.adds(agent, s, sub) {
		b := &ts.plain[0]
		if sub {
			b = &ts.plain[1]
		}
		return b.defs, b.offered
	}
	return ts.assemble(ctx, agent, s, sub)
}

// builtinTools are the built-in tools a session or a sub-agent session is offered when
// nothing adds to or narrows them, assembled once (newToolset).
type builtinTools struct {
	defs    []provider.Tool
	offered map[string]*tool
}

// adds says whether the turn's Agent or session adds tools to the built-in ones (memory,
// MCP servers, remote A2A agents, a sub-agent's workspace) or narrows them.
func (ts *toolset) adds(agent *sessionsv1alpha1.Agent, s *sessionsv1alpha1.AgentSession, sub bool) bool {
	return agent.Spec.Memory.Enabled || (sub && len(agent.Spec.Subagents.Tools) > 0) ||
		(ts.src.MCP != nil && len(agent.Spec.Tools.MCPServers) > 0) ||
		(ts.src.A2A != nil && len(agent.Spec.Tools.A2AAgents) > 0) ||
		(sub && ts.src.WorkspaceRoot != "" && s.Status.SessionID != "") ||
		(ts.src.Sandboxes != nil && policy.Sandboxed(s, agent))
}

// assemble builds the tools of a turn whose Agent or session adds to or narrows the
// built-in ones.
func (ts *toolset) assemble(ctx context.Context, agent *sessionsv1alpha1.Agent, s *sessionsv1alpha1.AgentSession, sub bool) ([]provider.Tool, map[string]*tool) {
	var defs []provider.Tool
	offered := map[string]*tool{}
	add := func(tl *tool) {
		if _, dup := offered[tl.def.Name]; !dup {
			offered[tl.def.Name] = tl
			defs = append(defs, tl.def)
		}
	}
	allowed := func(name string, session bool) bool {
		return !sub || policy.SubagentOffers(agent.Spec.Subagents.Tools, name, session)
	}
	for _, tl := range ts.builtin {
		if tl.memory && !agent.Spec.Memory.Enabled {
			continue
		}
		if allowed(tl.def.Name, tl.session) {
			add(tl)
		}
	}
	if ts.src.MCP != nil && len(agent.Spec.Tools.MCPServers) > 0 {
		set := ts.src.MCP.Resolve(ctx, agent)
		for _, mt := range set.Tools() {
			if allowed(mt.Name, false) {
				add(mcpTool(set, mt))
			}
		}
	}
	if ts.src.A2A != nil && len(agent.Spec.Tools.A2AAgents) > 0 {
		set := ts.src.A2A.Resolve(ctx, agent)
		for _, at := range set.Tools() {
			if allowed(at.Name, false) {
				add(a2aTool(set, at))
			}
		}
	}
	if ts.src.Sandboxes != nil && policy.Sandboxed(s, agent) {
		for _, tl := range ts.sandbox {
			if allowed(tl.def.Name, false) {
				add(tl)
			}
		}
	}
	switch {
	case sub && ts.src.Sandboxes != nil && policy.Sandboxed(s, agent):
		// A sandboxed child's attachments are in its sandbox: so is the workspace it reads.
		for _, tl := range ts.sandboxWorkspace {
			add(tl)
		}
	case sub && ts.src.WorkspaceRoot != "" && s.Status.SessionID != "":
		list, read := folderWorkspace(WorkspaceDir(ts.src.WorkspaceRoot, s.Namespace, s.Status.SessionID))
		add(workspaceListTool(list))
		add(workspaceReadTool(read))
	}
	return defs, offered
}

// mcpTool offers one tool of an MCP server, carrying the turn's chain in _meta; its result
// text and error flag go to the model as the server gave them. A server that fails or is slow ends only this call.
func mcpTool(set *mcptools.Set, mt mcptools.Tool) *tool {
	desc := mt.Description
	if desc == "" {
		desc = "Tool " + mt.Remote + " of the MCP server " + mt.Server + "."
	}
	return &tool{
		family: "mcp",
		def:    provider.Tool{Name: mt.Name, Description: desc, Parameters: mt.Schema},
		run: func(ctx context.Context, c *toolCall) (any, error) {
			carry, _, err := c.carried(ctx, set.Target(mt.Name), false)
			if err != nil {
				return nil, err
			}
			r := set.CallCarrying(ctx, mt.Name, c.args, carry)
			if r.IsError && r.ChainRefused != "" {
				c.warnChainRoot(ctx, carry, r.ChainRefused)
			}
			return toolText{text: r.Text, isErr: r.IsError}, nil
		},
	}
}

// a2aTool offers one remote A2A agent: the call carries the turn's chain (refused when the
// chain may not go on), sends the message and waits for the task; the turn's end (its run
// cancelled, its timeout) cancels the remote task.
func a2aTool(set *a2atools.Set, at a2atools.Tool) *tool {
	return &tool{
		family: "a2a",
		def:    provider.Tool{Name: at.Name, Description: at.Description, Parameters: a2atools.Schema},
		run: func(ctx context.Context, c *toolCall) (any, error) {
			carry, denied, err := c.carried(ctx, set.Target(at.Name), true)
			if err != nil {
				return nil, err
			}
			if denied != nil {
				return toolText{text: denied.Message, isErr: true}, nil
			}
			r := set.CallCarrying(ctx, at.Name, c.args, carry)
			return toolText{text: r.Text, isErr: r.IsError}, nil
		},
	}
}
