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
	"os"
	"strconv"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

// The send suites measure in rounds, ours and the null's interleaved, and judge the median
// of the rounds' ratios: one run's single window of sends then one of nulls put the two
// sides under different neighbours, a different API server heap and whatever background
// work (an etcd compaction, a lease renewal burst) fell in one window, which moved the
// saturated CPU ratio from ×1.87 to ×3.2 on the same tree (docs/operations/scaling.md,
// "Reading the send figures").
const (
	// sendRounds of roundSends saturated sends, each beside as many nulls: three pairs.
	sendRounds = 6
	roundSends = 200
	// c1Rounds of c1RoundSends sends one after another, each beside as many nulls: three pairs.
	c1Rounds     = 6
	c1RoundSends = 50
)

// roundResult is one side of one round: each object's latency and the CPU seconds of every
// process the bench started, by command name and under "total"; the first round also
// carries its window's stage and request figures.
type roundResult struct {
	lat  []time.Duration
	cpu  map[string]float64
	figs []Figure
}

// roundSet is every round of both sides, in order.
type roundSet struct{ ours, null []roundResult }

// runRounds runs n rounds of run, ours and the null's one after the other, alternating which
// goes first so that neither side always meets the heap and the backlog the other left.
func runRounds(ctx context.Context, n int, run func(ctx context.Context, round int, ours bool) (roundResult, error)) (roundSet, error) {
	var rs roundSet
	for i := range n {
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, ours := range order {
			r, err := run(ctx, i, ours)
			if err != nil {
				return rs, fmt.Errorf("round %d: %w", i+1, err)
			}
			if ours {
				rs.ours = append(rs.ours, r)
			} else {
				rs.null = append(rs.null, r)
			}
		}
		o, z := rs.ours[i], rs.null[i]
		load := "-"
		if l := benchfig.LoadAverage(); l != nil {
			load = strconv.FormatFloat(*l, 'f', 1, 64)
		}
		fmt.Fprintf(os.Stderr, "bench: round %d/%d (load %s): p50 %.2f vs null %.2f ms, %.2f vs %.2f cpu-ms per object (×%.2f; API server %.2f vs %.2f)\n",
			i+1, n, load, quantileMS(o.lat, 0.5), quantileMS(z.lat, 0.5), perObjectMS(o, "total"), perObjectMS(z, "total"),
			perObjectMS(o, "total")/perObjectMS(z, "total"), perObjectMS(o, "kube-apiserver"), perObjectMS(z, "kube-apiserver"))
	}
	return rs, nil
}

// perObjectMS is a side's CPU milliseconds per object of process comm ("total": all).
func perObjectMS(r roundResult, comm string) float64 {
	if len(r.lat) == 0 {
		return 0
	}
	return r.cpu[comm] / float64(len(r.lat)) * 1000
}

// compare states the figure of measure over the rounds, taken in pairs: the medians of both
// sides and of the pairs' ratios, with their spread. A pair is two rounds in a row, one
// with ours first and one with the null first. Which side goes first moves a round's ratio
// by a third (a c=1 run at load 21: x2.1 with ours first, x3.2 with the null first: each
// side's window also pays for work the one before it left behind), so single rounds
// would split into two groups and their median would pick one; a pair holds both orders.
func (rs roundSet) compare(name string, measure func(roundResult) float64, unit, target string) Figure {
	of := func(rr []roundResult) []float64 {
		var out []float64
		for i := 0; i+1 < len(rr); i += 2 {
			out = append(out, (measure(rr[i])+measure(rr[i+1]))/2)
		}
		return out
	}
	return benchfig.CompareRounds(name, of(rs.ours), of(rs.null), unit, target)
}

// roundPrefixes name a round's window figures: each side's stages and API requests.
type roundPrefixes struct{ sendStage, sendReq, nullStage, nullReq string }

// measureRound runs one side of a round: n sends (ours) or nulls from concurrency workers,
// then settle (the last objects' steps after their ok land inside the window), reading the
// CPU of every process around it and, in the first round, the stage and request window.
func measureRound(ctx context.Context, cfg *rest.Config, c *devcluster.Cluster, dyn dynamic.Interface, round int, ours bool, n, concurrency int, label string, p roundPrefixes) (roundResult, error) {
	var win *window
	if round == 0 {
		stages := nullStages
		if ours {
			stages = sendStages
		}
		var err error
		if win, err = openWindow(ctx, cfg, c, stages); err != nil {
			return roundResult{}, err
		}
	}
	prefix := label + strconv.Itoa(round)
	mark := clusterCPU()
	var lat []time.Duration
	var err error
	if ours {
		lat, err = measureSends(ctx, dyn, n, concurrency, prefix)
	} else {
		lat, err = measureNulls(ctx, dyn, n, concurrency, prefix)
	}
	if err != nil {
		return roundResult{}, err
	}
	time.Sleep(settle)
	r := roundResult{lat: lat, cpu: cpuSince(mark)}
	if win != nil {
		stagePrefix, reqPrefix := p.nullStage, p.nullReq
		if ours {
			stagePrefix, reqPrefix = p.sendStage, p.sendReq
		}
		if r.figs, err = win.close(ctx, stagePrefix, reqPrefix, n); err != nil {
			return roundResult{}, err
		}
	}
	return r, nil
}

// satRound is one side of a saturated round (concurrency 20).
func satRound(ctx context.Context, cfg *rest.Config, c *devcluster.Cluster, dyn dynamic.Interface, round int, ours bool) (roundResult, error) {
	return measureRound(ctx, cfg, c, dyn, round, ours, roundSends, sendConcurrency, "sat",
		roundPrefixes{"send_sat_stage_", "api_requests_per_send_sat_", "null_sat_stage_", "api_requests_per_null_sat_"})
}
