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
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The namespace budget's window, as the SessionPolicy controller records it in
// status.spend: an alert compares the two (config/prometheus, 80%). resource is cost (in
// units of the Agents' pricing currency) or tokens.
var (
	BudgetWindowSpend = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "agent_sessions_budget_window_spend",
		Help: "What the namespace's turns spent in the current window of its SessionPolicy's spec.budgets.namespace, by resource (cost, tokens).",
	}, []string{"namespace", "resource"})
	BudgetWindowLimit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "agent_sessions_budget_window_limit",
		Help: "The namespace's limit per window (SessionPolicy spec.budgets.namespace maxCost, maxTokens), by resource (cost, tokens).",
	}, []string{"namespace", "resource"})
)

func init() {
	metrics.Registry.MustRegister(BudgetWindowSpend, BudgetWindowLimit)
}
