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
	"context"
	"fmt"
	"net/http"

	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
)

// Defaults of the per-user API rate (SidecarConfig.APIQPSPerUser, APIBurstPerUser): five
// users at full rate take the store's whole client (apiQPS).
const (
	DefaultAPIQPSPerUser   = 20
	DefaultAPIBurstPerUser = 40
)

// UserLimits are the per-user bounds all doors share (docs/operations/security.md, "Limits").
type UserLimits struct {
	Streams *userlimits.Streams
	Rates   *userlimits.Rates
	MCP     mcpserver.SessionLimits
}

// NewUserLimits are cfg's per-user bounds (the defaults where cfg leaves them 0).
func NewUserLimits(cfg SidecarConfig) UserLimits {
	qps, burst := cfg.APIQPSPerUser, cfg.APIBurstPerUser
	if qps == 0 {
		qps = DefaultAPIQPSPerUser
	}
	if burst <= 0 {
		burst = DefaultAPIBurstPerUser
	}
	l := UserLimits{
		Streams: userlimits.NewStreams(maxStreamsOr(cfg.MaxStreamsPerUser)),
		Rates:   userlimits.NewRates(qps, burst, cfg.Clock), // qps < 0: none
	}
	l.MCP = mcpserver.SessionLimits{MaxPerUser: cfg.MaxMCPSessionsPerUser, IdleTimeout: cfg.MCPSessionIdleTimeout,
		Streams: l.Streams, Rates: l.Rates, Clock: cfg.Clock}
	return l
}

// LimitStreams bounds the /events streams one user holds open at once, counted in streams
// with the user's other streams: the one over the bound gets 429. identify names the
// token's user; a request it cannot name goes on to h, which refuses it.
func LimitStreams(h http.Handler, identify func(ctx context.Context, token string) (string, error), streams *userlimits.Streams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, _ := bearerToken(r)
		user, err := identify(r.Context(), token)
		if err != nil {
			h.ServeHTTP(w, r)
			return
		}
		release, ok := acquireStream(w, streams, user)
		if !ok {
			return
		}
		defer release()
		h.ServeHTTP(w, r)
	})
}

// acquireStream takes one of user's streams, or answers 429.
func acquireStream(w http.ResponseWriter, streams *userlimits.Streams, user string) (release func(), ok bool) {
	release, ok = streams.Acquire(user)
	if !ok {
		writeError(w, http.StatusTooManyRequests, transcript.ErrTypeTooManyStreams,
			fmt.Sprintf("user %q has %d streams open (/events, history and /mcp together), the most allowed; "+
				"close one, or raise --max-streams-per-user", user, streams.Max()))
	}
	return release, ok
}

// ChargeSARs makes every SubjectAccessReview of the access layer about a user take one of
// that user's API calls (/metrics reviews are Prometheus's, not a user's).
func (a *KubeAuthorizer) ChargeSARs(r *userlimits.Rates) {
	a.access.SARs = userlimits.ChargeSARs(a.access.SARs, r)
}
