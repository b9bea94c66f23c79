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
	"github.com/a2aproject/a2a-go/a2a"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// ProtocolVersion is the A2A protocol version the SDK (github.com/a2aproject/a2a-go v0.3.3)
// implements and this server speaks: JSON-RPC 2.0 over HTTP, message/stream over SSE.
const ProtocolVersion = "0.3.0"

// SecurityScheme is the name of the card's one security scheme: a bearer token the API
// server's TokenReview accepts for the history listener's audience.
const SecurityScheme = "kubernetes"

// Card is the agent card of agent served at url.
func Card(agent *v1.Agent, url string) *a2a.AgentCard {
	desc := agent.Spec.Description
	if desc == "" {
		desc = "Agent " + agent.Name + " of namespace " + agent.Namespace + "."
	}
	text := []string{"text/plain"}
	return &a2a.AgentCard{
		Name:               agent.Name,
		Description:        desc,
		URL:                url,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    ProtocolVersion,
		Version:            v1.GroupVersion.Version,
		Provider:           &a2a.AgentProvider{Org: "agent-session-operator", URL: "https://github.com/agent-sessions/agent-session-operator"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
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
		Security: []a2a.SecurityRequirements{{SecurityScheme: a2a.SecuritySchemeScopes{}}},
	}
}
