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

package agent

import (
	"fmt"
	"strings"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
)

// mcpStatus records in status.mcpServers what the Agent's MCP servers answered initialize
// (probed through the pool the turns use, so a probe warms their cache). It takes a
// finished probe of this generation, else starts one and keeps what the last probe of this
// generation said, or reports the servers as probing. It returns the sentence for the
// Ready message and whether a server should be asked again later. A server that is down
// does not make the Agent unready: its tools are simply not offered.
func (r *AgentReconciler) mcpStatus(a *sessionsv1alpha1.Agent) (string, bool) {
	mcp := r.MCP != nil && len(a.Spec.Tools.MCPServers) > 0
	remote := r.A2A != nil && len(a.Spec.Tools.A2AAgents) > 0
	if !mcp {
		a.Status.MCPServers = nil
	}
	if !remote {
		a.Status.A2AAgents = nil
	}
	if !mcp && !remote {
		return "", false
	}
	if res, ok := r.probes.result(a); ok {
		a.Status.MCPServers, a.Status.A2AAgents = nonEmpty(res.servers, mcp), nonEmpty(res.cards, remote)
		return toolsSummary(a)
	}
	r.probes.start(a)
	if mcp && !mcpReported(a) {
		a.Status.MCPServers = make([]sessionsv1alpha1.MCPServerStatus, len(a.Spec.Tools.MCPServers))
		for i, s := range a.Spec.Tools.MCPServers {
			a.Status.MCPServers[i] = sessionsv1alpha1.MCPServerStatus{Name: s.Name, Reason: mcpReasonProbing, Message: "waiting for the first answer"}
		}
	}
	if remote && !a2aReported(a) {
		a.Status.A2AAgents = make([]sessionsv1alpha1.A2AAgentStatus, len(a.Spec.Tools.A2AAgents))
		for i, s := range a.Spec.Tools.A2AAgents {
			a.Status.A2AAgents[i] = sessionsv1alpha1.A2AAgentStatus{Name: s.Name, Reason: mcpReasonProbing, Message: "waiting for the card"}
		}
	}
	summary, _ := toolsSummary(a)
	return summary, false
}

// nonEmpty is list when want, else nil.
func nonEmpty[T any](list []T, want bool) []T {
	if !want {
		return nil
	}
	return list
}

// toolsSummary is the Ready message's part on the MCP servers and remote A2A agents, and
// whether one should be asked again later.
func toolsSummary(a *sessionsv1alpha1.Agent) (string, bool) {
	var parts []string
	retry := false
	if len(a.Status.MCPServers) > 0 {
		s, r := mcpSummary(a.Status.MCPServers)
		parts, retry = append(parts, s), r
	}
	if len(a.Status.A2AAgents) > 0 {
		s, r := a2aSummary(a.Status.A2AAgents)
		parts, retry = append(parts, s), retry || r
	}
	return strings.Join(parts, "; "), retry
}

// mcpReasonProbing is the reason of a server, and of the Agent's Ready condition, while the
// first probe of a generation runs.
const mcpReasonProbing = "Probing"

// mcpReported says whether status.mcpServers is about a's generation and servers.
func mcpReported(a *sessionsv1alpha1.Agent) bool {
	if a.Status.ObservedGeneration != a.Generation || len(a.Status.MCPServers) != len(a.Spec.Tools.MCPServers) {
		return false
	}
	for i, s := range a.Spec.Tools.MCPServers {
		if a.Status.MCPServers[i].Name != s.Name {
			return false
		}
	}
	return true
}

// mcpProbing says whether a server has not been probed yet.
func mcpProbing(servers []sessionsv1alpha1.MCPServerStatus) bool {
	for _, s := range servers {
		if s.Reason == mcpReasonProbing {
			return true
		}
	}
	return false
}

// mcpRefused returns the reason and message of the first MCP server the operator refuses
// (its URL by the egress allow list, a header Secret by the Secret rule, or a server that
// pointed the client at another origin): the Agent is not Ready then, as with a bad API
// key. An unreachable server is not counted.
func mcpRefused(servers []sessionsv1alpha1.MCPServerStatus) (string, string) {
	for _, s := range servers {
		switch s.Reason {
		case mcptools.ReasonEgressRefused, mcptools.ReasonSecretNotUsable, mcptools.ReasonInvalidURL, mcptools.ReasonOriginRefused:
			return s.Reason, fmt.Sprintf("MCP server %s: %s", s.Name, s.Message)
		}
	}
	return "", ""
}

// mcpSummary is e.g. "MCP servers: everything 13 tools, search not connected".
func mcpSummary(servers []sessionsv1alpha1.MCPServerStatus) (string, bool) {
	parts := make([]string, 0, len(servers))
	retry := false
	for _, s := range servers {
		switch {
		case s.Connected:
			parts = append(parts, fmt.Sprintf("%s %d tools", s.Name, s.Tools))
		case s.Reason == mcpReasonProbing:
			parts = append(parts, s.Name+" probing")
		default:
			parts = append(parts, s.Name+" not connected")
			retry = true
		}
	}
	return "MCP servers: " + strings.Join(parts, ", "), retry
}
