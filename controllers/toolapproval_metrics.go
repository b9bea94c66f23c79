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

package controllers

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

var (
	approvalsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_sessions_tool_approvals_total",
		Help: "Tool calls that waited for a person, by namespace and outcome (requested, approved, denied, expired).",
	}, []string{"namespace", "outcome"})
	approvalDecisionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agent_sessions_tool_approval_decision_seconds",
		Help:    "Time from a ToolApproval's creation to its decision or expiry, by outcome.",
		Buckets: prometheus.ExponentialBuckets(1, 2.5, 12),
	}, []string{"outcome"})
)

func init() {
	metrics.Registry.MustRegister(approvalsTotal, approvalDecisionSeconds)
}

// observeApproval counts a decided approval and how long it waited.
func observeApproval(ta *v1.ToolApproval) {
	outcome := strings.ToLower(string(ta.Status.Phase))
	approvalsTotal.WithLabelValues(ta.Namespace, outcome).Inc()
	if ta.Status.DecidedAt != nil {
		approvalDecisionSeconds.WithLabelValues(outcome).Observe(ta.Status.DecidedAt.Sub(ta.CreationTimestamp.Time).Seconds())
	}
}
