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

package budget

import (
	"github.com/prometheus/client_golang/prometheus"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// The namespace budget's window, as the ledger counts it for the SessionPolicy's
// status.spend: an alert compares the two (config/prometheus, 80%). resource is cost (in
// units of the Agents' pricing currency) or tokens.
var (
	windowSpend = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "agent_sessions_budget_window_spend",
		Help: "What the namespace's turns spent in the current window of its SessionPolicy's spec.budgets.namespace, by resource (cost, tokens).",
	}, []string{"namespace", "resource"})
	windowLimit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "agent_sessions_budget_window_limit",
		Help: "The namespace's limit per window (SessionPolicy spec.budgets.namespace maxCost, maxTokens), by resource (cost, tokens).",
	}, []string{"namespace", "resource"})
)

// RegisterMetrics registers the budget window gauges with r; the manager's main calls it.
func RegisterMetrics(r prometheus.Registerer) {
	r.MustRegister(windowSpend, windowLimit)
}

// export sets the window gauges of p's namespace (s nil: it has no namespace budget).
func export(p *sessionsv1alpha1.SessionPolicy, s *sessionsv1alpha1.Spend) {
	ns := p.Namespace
	if s == nil {
		windowSpend.DeletePartialMatch(prometheus.Labels{"namespace": ns})
		windowLimit.DeletePartialMatch(prometheus.Labels{"namespace": ns})
		return
	}
	b := p.Spec.Budgets.Namespace
	cost, _ := usage.ParseNanos(s.Cost)
	windowSpend.WithLabelValues(ns, "cost").Set(float64(cost) / 1e9)
	windowSpend.WithLabelValues(ns, "tokens").Set(float64(s.Tokens))
	if limit, err := usage.ParseNanos(b.MaxCost); err == nil && b.MaxCost != "" {
		windowLimit.WithLabelValues(ns, "cost").Set(float64(limit) / 1e9)
	} else {
		windowLimit.DeleteLabelValues(ns, "cost")
	}
	if b.MaxTokens != nil {
		windowLimit.WithLabelValues(ns, "tokens").Set(float64(*b.MaxTokens))
	} else {
		windowLimit.DeleteLabelValues(ns, "tokens")
	}
}
