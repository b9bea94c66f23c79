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

package toolapproval

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// The ToolApproval controller's metrics, defined here beside the reconciler that counts them
// (a metric lives in the package that counts it: DEVELOPMENT.md). RegisterMetrics puts them
// in the manager's registry, served on its metrics endpoint.
var (
	// The approval metrics: the ToolApproval controller counts outcomes and decision
	// times; the overdue gauge is counted from the cache at each scrape, so it still
	// reports when the controller that should expire approvals is stuck.
	approvalsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_sessions_tool_approvals_total",
		Help: "Tool calls that waited for a person, by namespace and outcome (requested, approved, denied, expired).",
	}, []string{"namespace", "outcome"})
	approvalDecisionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agent_sessions_tool_approval_decision_seconds",
		Help:    "Time from a ToolApproval's creation to its decision or expiry, by outcome.",
		Buckets: prometheus.ExponentialBuckets(1, 2.5, 12),
	}, []string{"outcome"})
	approvalsOverdue = &overdueApprovals{desc: prometheus.NewDesc("agent_sessions_tool_approvals_overdue",
		"ToolApprovals still Pending after their expiresAt, by namespace: the operator should have expired them.",
		[]string{"namespace"}, nil)}
)

// RegisterMetrics registers the approval metrics with r; the manager's main calls it with
// controller-runtime's registry (nothing registers as a side effect of an import).
func RegisterMetrics(r prometheus.Registerer) {
	r.MustRegister(approvalsTotal, approvalDecisionSeconds, approvalsOverdue)
}

// approvalRequested counts a ToolApproval that began to wait.
func approvalRequested(namespace string) {
	approvalsTotal.WithLabelValues(namespace, "requested").Inc()
}

// approvalDecided counts a decided (or expired) ToolApproval and how long it waited.
func approvalDecided(ta *sessionsv1alpha1.ToolApproval) {
	outcome := strings.ToLower(string(ta.Status.Phase))
	approvalsTotal.WithLabelValues(ta.Namespace, outcome).Inc()
	if ta.Status.DecidedAt != nil {
		approvalDecisionSeconds.WithLabelValues(outcome).Observe(ta.Status.DecidedAt.Sub(ta.CreationTimestamp.Time).Seconds())
	}
}

// overdueApprovals counts, at scrape time, the pending approvals past their expiresAt in the
// cache of the last ToolApproval controller set up.
type overdueApprovals struct {
	desc *prometheus.Desc
	src  atomic.Pointer[approvalSource]
}

type approvalSource struct {
	reader client.Reader
	clock  clock.PassiveClock
}

// scrapeListTimeout bounds the cache list of one scrape.
const scrapeListTimeout = 5 * time.Second

// watch makes the gauge count the approvals reader lists (the manager's cache).
func (o *overdueApprovals) watch(reader client.Reader, clk clock.PassiveClock) {
	o.src.Store(&approvalSource{reader: reader, clock: clk})
}

func (o *overdueApprovals) Describe(ch chan<- *prometheus.Desc) { ch <- o.desc }

func (o *overdueApprovals) Collect(ch chan<- prometheus.Metric) {
	src := o.src.Load()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeListTimeout)
	defer cancel()
	var list sessionsv1alpha1.ToolApprovalList
	if err := src.reader.List(ctx, &list); err != nil {
		return
	}
	now := src.clock.Now()
	overdue := map[string]int{}
	for _, ta := range list.Items {
		if !ta.Status.Decided() && now.After(ta.Spec.ExpiresAt.Time) {
			overdue[ta.Namespace]++
		}
	}
	for ns, n := range overdue {
		ch <- prometheus.MustNewConstMetric(o.desc, prometheus.GaugeValue, float64(n), ns)
	}
}
