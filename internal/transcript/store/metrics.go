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

package store

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the sidecar's Prometheus collectors. NewMetrics(nil) gives working but
// unregistered collectors, which is what tests and other packages' benchmarks use.
type Metrics struct {
	AppendsTotal   prometheus.Counter
	AppendLatency  prometheus.Histogram
	FsyncBatchSize prometheus.Histogram
	OpenFiles      prometheus.Gauge
	SSESubscribers prometheus.Gauge
	Repairs        prometheus.Counter
	CorruptLines   prometheus.Counter
}

// NewMetrics creates the collectors and registers them with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		AppendsTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "transcript_appends_total", Help: "Records appended durably (idempotent replays excluded).",
		}),
		AppendLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "transcript_append_duration_seconds", Help: "Append call latency until durable.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		FsyncBatchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "transcript_fsync_batch_size", Help: "Records made durable by one fsync (group commit).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 12),
		}),
		OpenFiles: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "transcript_open_files", Help: "Transcript files currently open.",
		}),
		SSESubscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "transcript_sse_subscribers", Help: "Live history followers.",
		}),
		Repairs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "transcript_tail_repairs_total", Help: "Torn or unparsable last lines truncated on open.",
		}),
		CorruptLines: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "transcript_corrupt_lines_total", Help: "Unparsable lines skipped while indexing transcripts.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.AppendsTotal, m.AppendLatency, m.FsyncBatchSize, m.OpenFiles, m.SSESubscribers,
			m.Repairs, m.CorruptLines)
	}
	return m
}
