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

package server

import (
	"net/http"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// mcpHandler is /mcp: the session tools over MCP, each call made as the caller through
// impersonation from the sidecar's identity (config/rbac/mcp_impersonation_role.yaml).
// Tokens are asked for the history API's audiences.
func mcpHandler(rc *rest.Config, cfg SidecarConfig, transcripts sessiontools.Transcripts, sessions client.Reader) (http.Handler, error) {
	rv, err := caller.NewReviewer(rc, cfg.Audiences...)
	if err != nil {
		return nil, err
	}
	f, err := caller.NewFactory(rc, scheme.New())
	if err != nil {
		return nil, err
	}
	access, err := caller.NewAccess(rc)
	if err != nil {
		return nil, err
	}
	return mcpserver.Handler(mcpserver.Options{
		Identify:     rv.Identify,
		ClientFor:    f.Client,
		Store:        transcripts,
		Sessions:     sessions,
		Access:       access.Check,
		AllowedHosts: cfg.MCPAllowedHosts,
	}), nil
}
