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

package a2aserver

import (
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// ProtocolVersion is the A2A protocol version this server speaks first (github.com/a2aproject/a2a-go/v2):
// JSON-RPC 2.0 and HTTP+JSON, SendStreamingMessage over SSE.
const ProtocolVersion = a2a.Version

// LegacyProtocolVersion is the version it keeps for older clients (a2acompat/a2av0): JSON-RPC
// at the same URL, told apart by its method names (message/send against SendMessage).
const LegacyProtocolVersion = a2av0.Version

// SecurityScheme is the name of the card's one security scheme: a bearer token the API
// server's TokenReview accepts for the history listener's audience.
const SecurityScheme = "kubernetes"

// Card is the agent card of agent served at url: A2A 1.0 over JSON-RPC and HTTP+JSON at url,
// then 0.3 over JSON-RPC at the same url.
func Card(agent *sessionsv1alpha1.Agent, url string) *a2a.AgentCard {
	desc := agent.Spec.Description
	if desc == "" {
		desc = "Agent " + agent.Name + " of namespace " + agent.Namespace + "."
	}
	text := []string{"text/plain"}
	return &a2a.AgentCard{
		Name:        agent.Name,
		Description: desc,
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: url, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: ProtocolVersion},
			{URL: url, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: ProtocolVersion},
			{URL: url, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: LegacyProtocolVersion},
		},
		Version:            sessionsv1alpha1.GroupVersion.Version,
		Provider:           &a2a.AgentProvider{Org: "agent-session-operator", URL: "https://github.com/agent-sessions/agent-session-operator"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, Extensions: []a2a.AgentExtension{ChainExtension}},
		DefaultInputModes:  text,
		DefaultOutputModes: text,
		Skills: []a2a.AgentSkill{{
			ID: "converse", Name: "converse", Description: desc, Tags: []string{"chat", "agent-sessions"},
			Examples: []string{"A message in the conversation's session; the reply is the task's artifact."},
		}},
		SecuritySchemes: a2a.NamedSecuritySchemes{SecurityScheme: a2a.HTTPAuthSecurityScheme{
			Scheme: "Bearer", BearerFormat: "JWT",
			Description: "A Kubernetes token for the audience agent-sessions (kubectl create token SA --audience agent-sessions); " +
				"every call is made as its user, RBAC and admission judge it.",
		}},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{SecurityScheme: a2a.SecuritySchemeScopes{}}},
	}
}
