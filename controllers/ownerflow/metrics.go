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

package ownerflow

import (
	"github.com/prometheus/client_golang/prometheus"
)

// The step runner's metric (a metric lives in the package that counts it: DEVELOPMENT.md), served
// on the manager's metrics endpoint once its main calls RegisterMetrics.
var (
	// finishedTotal counts SessionSends and SubagentRuns as they reach a terminal phase;
	// the step runner increments it once per object, when the status write lands.
	finishedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_sessions_finished_total",
		Help: "SessionSends and SubagentRuns finished, by kind and phase (Completed, Failed, Cancelled; Succeeded, TimedOut).",
	}, []string{"kind", "phase"})
)

// RegisterMetrics registers the step runner's metric with r; the manager's main calls it.
func RegisterMetrics(r prometheus.Registerer) {
	r.MustRegister(finishedTotal)
}
