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

package sandbox

import (
	"github.com/prometheus/client_golang/prometheus"
)

// claimsTotal counts the SandboxClaims sessions made (created) or failed to make (failed);
// a claim found already there (a repeated call, a restart) is not counted again.
var claimsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "agent_sessions_sandbox_claims_total",
	Help: "SandboxClaims made for sandboxed sessions' first tool calls, by outcome (created, failed).",
}, []string{"outcome"})

// RegisterMetrics registers the sandbox claims counter with r; the manager's main calls it.
func RegisterMetrics(r prometheus.Registerer) {
	r.MustRegister(claimsTotal)
}
