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
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// ChainExtension is the chain extension as the agent cards declare it
// (docs/reference/chain-extension.md): not required, so a client that knows nothing of it
// is served as before, its sends starting new chains.
var ChainExtension = a2a.AgentExtension{URI: policy.ChainExtensionURI,
	Description: "Loop and budget limits that travel: a message's metadata under this URI carries its chain " +
		"(id, hops, sends, hashed pairs visited), the budget left above it and its deadline; they only narrow this server's limits."}

// carriedChain is the chain a message carries, when the caller activated the extension
// (A2A-Extensions) and its value is well formed; nil otherwise: the send starts a new chain
// under this server's limits, which a caller that omits or mangles the value cannot widen.
func carriedChain(ctx context.Context, m *a2a.Message) *policy.CarriedChain {
	ext, ok := a2asrv.ExtensionsFrom(ctx)
	if !ok || !ext.Requested(&ChainExtension) {
		return nil
	}
	c, err := policy.CarriedFromValue(m.Metadata[policy.ChainExtensionURI])
	if err != nil {
		return nil
	}
	return c
}

// activateChain answers, for a request that asked for the chain extension, that it is
// active (the A2A-Extensions response header, as the spec has a server list what it
// activated; 0.3 spells it X-A2A-Extensions).
func activateChain(w http.ResponseWriter, r *http.Request) {
	for _, key := range []string{a2a.SvcParamExtensions, "X-" + a2a.SvcParamExtensions} {
		for _, v := range r.Header.Values(key) {
			if slices.ContainsFunc(strings.Split(v, ","), func(s string) bool { return strings.TrimSpace(s) == policy.ChainExtensionURI }) {
				w.Header().Set(key, policy.ChainExtensionURI)
				return
			}
		}
	}
}
