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

package transcriptstore

import (
	"net/http"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// CallerOptions are /mcp's and the console actions': each call made as the caller through
// impersonation from the sidecar's identity (config/rbac/mcp_impersonation_role.yaml),
// after the access layer the history API and /events ask (ka's) allows it. Tokens are asked
// for the history API's audiences.
func CallerOptions(rc *rest.Config, cfg SidecarConfig, ka *KubeAuthorizer, transcripts sessiontools.Transcripts, retired transcript.Retired, sessions client.Reader,
	limits UserLimits) (mcpserver.Options, error) {
	f, err := caller.NewFactory(rc, scheme.New())
	if err != nil {
		return mcpserver.Options{}, err
	}
	// Each caller's impersonated calls take from their own bucket (ka's reviews do too).
	if limits.Rates != nil {
		f.Limit = limits.Rates.Limiter
	}
	return mcpserver.Options{
		Identify:     ka.User,
		ClientFor:    f.Client,
		Store:        transcripts,
		Retired:      retired,
		Sessions:     sessions,
		Access:       ka.Access().Check,
		AllowedHosts: cfg.MCPAllowedHosts,
		Limits:       limits.MCP,
	}, nil
}

// NoCallerAPI answers /mcp, /a2a/ and the console actions of a sidecar without API access
// (--insecure-no-auth): it cannot tell who calls, so it acts for nobody.
func NoCallerAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "this transcript-store runs with --insecure-no-auth: it cannot authenticate callers, "+
			"so the session tools (MCP), A2A and console actions are off; the history API and events still answer",
			http.StatusNotImplemented)
	})
}
