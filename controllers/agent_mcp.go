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

package controllers

import (
	"context"
	"fmt"
	"strings"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
)

// mcpStatus asks the Agent's MCP servers (through the pool the turns use, so a probe warms
// their cache) and records what answered initialize in status.mcpServers. It returns the
// sentence for the Ready message and whether a server should be asked again later. A
// server that is down does not make the Agent unready: its tools are simply not offered.
func (r *AgentReconciler) mcpStatus(ctx context.Context, a *v1.Agent) (string, bool) {
	if r.MCP == nil || len(a.Spec.Tools.MCPServers) == 0 {
		a.Status.MCPServers = nil
		return "", false
	}
	a.Status.MCPServers = r.MCP.Resolve(ctx, a).Status()
	return mcpSummary(a.Status.MCPServers)
}

// mcpRefused returns the reason and message of the first MCP server the operator refuses
// (its URL by the egress allow list, a header Secret by the Secret rule, or a server that
// pointed the client at another origin): the Agent is not Ready then, as with a bad API
// key. An unreachable server is not counted.
func mcpRefused(servers []v1.MCPServerStatus) (string, string) {
	for _, s := range servers {
		switch s.Reason {
		case mcptools.ReasonEgressRefused, mcptools.ReasonSecretNotUsable, mcptools.ReasonInvalidURL, mcptools.ReasonOriginRefused:
			return s.Reason, fmt.Sprintf("MCP server %s: %s", s.Name, s.Message)
		}
	}
	return "", ""
}

// mcpSummary is e.g. "MCP servers: everything 13 tools, search not connected".
func mcpSummary(servers []v1.MCPServerStatus) (string, bool) {
	parts := make([]string, 0, len(servers))
	retry := false
	for _, s := range servers {
		if s.Connected {
			parts = append(parts, fmt.Sprintf("%s %d tools", s.Name, s.Tools))
		} else {
			parts = append(parts, s.Name+" not connected")
			retry = true
		}
	}
	return "MCP servers: " + strings.Join(parts, ", "), retry
}
