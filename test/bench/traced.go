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

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// tracedSends are the sends the traced suite times, as the send suite's one window did
// before it measured in rounds.
const tracedSends = 500

func init() {
	register("send-traced", benchSendTraced)
}

// benchSendTraced is the send latency with tracing on: the manager exports every span over
// OTLP/HTTP to a receiver in this process that decodes each export, as a collector would.
// Compare send_latency_p50_traced_ms with send_latency_p50_ms of the send suite.
func benchSendTraced() ([]Figure, error) {
	ctx := context.Background()
	var spans atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := &collectortrace.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans.Add(int64(len(ss.Spans)))
			}
		}
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer recv.Close()
	// The manager process inherits the environment: this turns its tracing on.
	if err := os.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.URL+"/v1/traces"); err != nil {
		return nil, err
	}
	defer os.Unsetenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")

	_, _, _, dyn, stop, err := sendCluster(ctx, "bench-send-traced.log", nil)
	if err != nil {
		return nil, err
	}
	defer stop()
	if _, err := measureSends(ctx, dyn, 20, sendConcurrency, "warm"); err != nil {
		return nil, fmt.Errorf("warm-up sends: %w", err)
	}
	lat, err := measureSends(ctx, dyn, tracedSends, sendConcurrency, "lat")
	if err != nil {
		return nil, err
	}
	if spans.Load() == 0 {
		return nil, fmt.Errorf("tracing on, but the receiver got no span")
	}
	return []Figure{
		{Name: "send_latency_p50_traced_ms", Value: quantileMS(lat, 0.5), Unit: "ms", Target: "send_latency_p50_ms within noise (tracing on, OTLP/HTTP to an in-process receiver)"},
		{Name: "send_latency_p99_traced_ms", Value: quantileMS(lat, 0.99), Unit: "ms"},
	}, nil
}
