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

package sessionschedule

import (
	"github.com/prometheus/client_golang/prometheus"
)

// The SessionSchedule controller's metric (a metric lives in the package that counts it:
// DEVELOPMENT.md), served
// once the manager's main calls RegisterMetrics.
var (
	// scheduleTicks counts ticks by outcome: sent, replaced (sent after cancelling the
	// running send), skipped (Forbid while a send ran), missed (past
	// startingDeadlineSeconds), refused (by the send policy, a budget or a chain limit),
	// error.
	scheduleTicks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_sessions_schedule_ticks_total",
		Help: "SessionSchedule ticks by outcome: sent, replaced, skipped, missed, refused, error.",
	}, []string{"outcome"})
)

// RegisterMetrics registers the schedule controller's metric with r; the manager's main calls it.
func RegisterMetrics(r prometheus.Registerer) {
	r.MustRegister(scheduleTicks)
}
