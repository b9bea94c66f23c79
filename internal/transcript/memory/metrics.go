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

package memory

import "github.com/prometheus/client_golang/prometheus"

// Where an embeddings call came from: the indexer (charged through the manager's collection)
// or a recall's query (charged by the turn that asks).
const (
	sourceIndex = "index"
	sourceQuery = "query"
)

// Metrics are the memory index's size and spend, served on the transcript-store's /metrics
// (store.Metrics' way: built against the program's registry, handed to Open).
type Metrics struct {
	chunks      prometheus.Gauge
	bytes       prometheus.Gauge
	embedTokens *prometheus.CounterVec
	held        prometheus.Gauge
}

// NewMetrics creates the index's metrics and registers them with reg (nil: nowhere).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		chunks: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agent_sessions_memory_chunks",
			Help: "Chunks the memory index holds, over all Agents of the store.",
		}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agent_sessions_memory_index_bytes",
			Help: "Memory the index's vectors and rows hold (bounded by the store's memory index limit).",
		}),
		embedTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agent_sessions_memory_embed_tokens_total",
			Help: "Tokens embedded, by source: index (the append path's indexer) or query (a recall).",
		}, []string{"source"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agent_sessions_memory_held_namespaces",
			Help: "Namespaces whose indexing waits because the manager found their budget window spent.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.chunks, m.bytes, m.embedTokens, m.held)
	}
	return m
}

// exportSize sets the size gauges from the index.
func (ix *Index) exportSize() {
	ix.m.chunks.Set(float64(ix.Chunks()))
	ix.m.bytes.Set(float64(ix.Bytes()))
}
