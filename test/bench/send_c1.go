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
)

func init() {
	register("send-c1", benchSendC1)
}

// benchSendC1 is the send latency with nothing else in flight: one send created, its ok
// observed, then the next; next to the null controller under the same rule. The saturated
// figure (concurrency 20) and its CPU per operation stay in the send suite.
func benchSendC1() ([]Figure, error) {
	ctx := context.Background()
	var mgrArgs []string
	if *profileDir != "" {
		mgrArgs = append(mgrArgs, "--pprof-bind-address="+pprofAddr())
	}
	c, cfg, _, dyn, stop, err := sendCluster(ctx, "bench-send-c1.log", mgrArgs)
	if err != nil {
		return nil, err
	}
	defer stop()
	stopNull := runNullController(ctx, dyn)
	defer stopNull()
	if _, err := measureSends(ctx, dyn, 20, 1, "c1warm"); err != nil {
		return nil, fmt.Errorf("warm-up sends: %w", err)
	}
	if _, err := measureNulls(ctx, dyn, 20, 1, "c1warm"); err != nil {
		return nil, fmt.Errorf("warm-up null: %w", err)
	}

	rounds, err := runRounds(ctx, c1Rounds, func(ctx context.Context, round int, ours bool) (roundResult, error) {
		return measureRound(ctx, cfg, c, dyn, round, ours, c1RoundSends, 1, "c1",
			roundPrefixes{"send_c1_stage_", "api_requests_per_send_", "null_c1_stage_", "api_requests_per_null_"})
	})
	if err != nil {
		return nil, err
	}
	if err := profileC1(ctx, cfg, dyn); err != nil {
		return nil, err
	}
	figs := []Figure{
		rounds.compare("send_latency_p50_c1_ms", func(r roundResult) float64 { return quantileMS(r.lat, 0.5) }, "ms",
			"ratio <= 1.5 (concurrency 1, the median of three pairs of interleaved rounds; baseline: null controller, create + status update + watch)"),
		rounds.compare("send_latency_p99_c1_ms", func(r roundResult) float64 { return quantileMS(r.lat, 0.99) }, "ms", "concurrency 1"),
		rounds.compare("cpu_ms_per_send_c1", func(r roundResult) float64 { return perObjectMS(r, "total") }, "cpu-ms",
			"concurrency 1; every process the bench started"),
	}
	figs = append(append(figs, rounds.ours[0].figs...), rounds.null[0].figs...)
	return append(figs, objectFigures(ctx, cfg, dyn)...), nil
}
