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
	"time"
)

func init() {
	register("send-c1", benchSendC1)
}

// c1Sends is how many sends (and nulls) the concurrency-1 figure times, one after another.
const c1Sends = 200

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

	sendWin, err := openWindow(ctx, cfg, c, sendStages)
	if err != nil {
		return nil, err
	}
	mark := clusterCPU()
	sendLat, err := measureSends(ctx, dyn, c1Sends, 1, "c1")
	if err != nil {
		return nil, err
	}
	sendFigs, err := sendWin.close(ctx, "send_c1_stage_", "api_requests_per_send_", c1Sends)
	if err != nil {
		return nil, err
	}
	time.Sleep(settle)
	sendCPU := cpuSince(mark)
	nullWin, err := openWindow(ctx, cfg, c, nullStages)
	if err != nil {
		return nil, err
	}
	mark = clusterCPU()
	nullLat, err := measureNulls(ctx, dyn, c1Sends, 1, "c1")
	if err != nil {
		return nil, err
	}
	nullFigs, err := nullWin.close(ctx, "null_c1_stage_", "api_requests_per_null_", c1Sends)
	if err != nil {
		return nil, err
	}
	time.Sleep(settle)
	nullCPU := cpuSince(mark)
	if err := profileC1(ctx, cfg, dyn); err != nil {
		return nil, err
	}
	figs := []Figure{
		Compare("send_latency_p50_c1_ms", quantileMS(sendLat, 0.5), quantileMS(nullLat, 0.5), "ms",
			"ratio <= 2.0 (concurrency 1; baseline: null controller, create + status update + watch)"),
		Compare("send_latency_p99_c1_ms", quantileMS(sendLat, 0.99), quantileMS(nullLat, 0.99), "ms", "concurrency 1"),
		Compare("cpu_ms_per_send_c1", sendCPU["total"]/c1Sends*1000, nullCPU["total"]/c1Sends*1000, "cpu-ms",
			"concurrency 1; every process on the machine"),
	}
	figs = append(append(figs, sendFigs...), nullFigs...)
	return append(figs, objectFigures(ctx, cfg, dyn)...), nil
}
