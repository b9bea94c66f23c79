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

package turns

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Turn outcomes, the outcome label of turnsTotal.
const (
	outcomeOK      = "ok"
	outcomeError   = "error"
	outcomeAborted = "aborted"
	outcomeTimeout = "timeout"
)

// Tool call outcomes, the outcome label of toolCallsTotal.
const (
	toolOK    = "ok"
	toolError = "error"
)

// The engine's metrics, registered by RegisterMetrics with the manager's registry (served on
// its metrics endpoint). They are package-level because a registry takes each collector once.
var (
	turnsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_sessions_turns_total",
		Help: "Agent turns finished, by agent and outcome (ok, error, aborted, timeout).",
	}, []string{"agent", "outcome"})
	turnDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agent_sessions_turn_duration_seconds",
		Help:    "Run time of agent turns, from start (after the lane and the global bound) to end.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
	}, []string{"agent"})
	// Counted when a model call's answer is recorded, never decremented: archiving or
	// deleting a session does not take its usage back. No session keys or object names.
	modelTokensTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_sessions_model_tokens_total",
		Help: "Model tokens used, by namespace, agent, model and direction (input, output, cached_input; cached is part of input).",
	}, []string{"namespace", "agent", "model", "direction"})
	modelCostTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_sessions_model_cost_total",
		Help: "Priced model usage (Agent spec.model.pricing), in units of currency, by namespace, agent, model and currency.",
	}, []string{"namespace", "agent", "model", "currency"})
	modelCallDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agent_sessions_model_call_duration_seconds",
		Help:    "Duration of model calls (retries included), by provider and outcome (ok, error).",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
	}, []string{"provider", "outcome"})
	toolCallsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_sessions_tool_calls_total",
		Help: "Tool calls executed, by tool and outcome (ok, error).",
	}, []string{"tool", "outcome"})
	toolCallDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agent_sessions_tool_call_duration_seconds",
		Help:    "Duration of tool calls, by tool (every MCP tool is mcp) and outcome (ok, error).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
	}, []string{"tool", "outcome"})
	laneQueueDepth = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "agent_sessions_lane_queue_depth",
		Help: "Turns waiting in session lanes (not yet started).",
	})
	turnsRunning = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "agent_sessions_turns_running",
		Help: "Turns running now (bounded by --max-concurrent-turns).",
	})
	sandboxExecSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "agent_sessions_sandbox_exec_seconds",
		Help:    "Time of an exec tool call in a session's sandbox, the sandbox's acquisition excluded.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	})
)

// RegisterMetrics registers the turn engine's metrics (compaction's included) with r; the
// manager's main calls it.
func RegisterMetrics(r prometheus.Registerer) {
	r.MustRegister(turnsTotal, turnDuration, modelTokensTotal, modelCostTotal, modelCallDuration,
		toolCallsTotal, toolCallDuration, laneQueueDepth, turnsRunning, compactionsTotal, compactionTokensSaved, sandboxExecSeconds)
}

// countModelUsage records one model call's recorded usage.
func countModelUsage(namespace, agent, model string, u *transcript.Usage) {
	if u == nil {
		return
	}
	modelTokensTotal.WithLabelValues(namespace, agent, model, "input").Add(float64(u.Input))
	modelTokensTotal.WithLabelValues(namespace, agent, model, "output").Add(float64(u.Output))
	if u.CachedInput > 0 {
		modelTokensTotal.WithLabelValues(namespace, agent, model, "cached_input").Add(float64(u.CachedInput))
	}
	if u.Currency != "" {
		modelCostTotal.WithLabelValues(namespace, agent, model, u.Currency).Add(float64(u.CostNanos) / 1e9)
	}
}
