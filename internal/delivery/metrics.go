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

package delivery

import (
	"github.com/prometheus/client_golang/prometheus"
)

// The outcome label of agent_sessions_deliveries_total: a part (or a webhook POST) the sink
// took, a failure that is tried again, a failure for good, or a part held back by the
// sink's own rate limit.
const (
	OutcomeDelivered = "delivered"
	OutcomeRetried   = "retried"
	OutcomeFailed    = "failed"
	OutcomeThrottled = "throttled"
)

var (
	deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_sessions_deliveries_total",
		Help: "Announce messages sent to delivery sinks, by channel and outcome (delivered, retried, failed, throttled).",
	}, []string{"channel", "outcome"})
	deliverySeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agent_sessions_delivery_duration_seconds",
		Help:    "How long a sink took to answer one announce message, by channel.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 10),
	}, []string{"channel"})
)

// RegisterMetrics registers the delivery metrics with r; the manager's main calls it.
func RegisterMetrics(r prometheus.Registerer) {
	r.MustRegister(deliveries, deliverySeconds)
}
