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

package eventrec

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Reasons an Event is not written, the reason label of eventsDropped.
const (
	dropRepeat    = "repeat"
	dropQueueFull = "queue_full"
	dropWrite     = "write_failed"
	dropInvalid   = "invalid"
)

// eventsDropped counts what the recorder's bounds cost, on the manager's metrics endpoint.
var eventsDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "agent_sessions_events_dropped_total",
	Help: "Events not written, by reason (repeat within the window, queue_full, write_failed, invalid).",
}, []string{"reason"})

// RegisterMetrics registers the recorder's metrics with r; the manager's main calls it.
func RegisterMetrics(r prometheus.Registerer) {
	r.MustRegister(eventsDropped)
}
