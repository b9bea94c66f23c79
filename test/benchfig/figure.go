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

// Package benchfig is what `make bench` and `make bench-peer` print: one JSON line per figure
// as it is measured, then a table of them all.
package benchfig

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Figure is one measured number. Baseline and Ratio are set for comparisons.
type Figure struct {
	Name     string   `json:"name"`
	Value    float64  `json:"value"`
	Unit     string   `json:"unit"`
	Baseline *float64 `json:"baseline,omitempty"`
	Ratio    *float64 `json:"ratio,omitempty"`
	// RatioMin and RatioMax are the spread of the per-round ratios of a figure measured in
	// interleaved rounds (CompareRounds), whose Ratio is their median; Rounds is their count.
	RatioMin *float64 `json:"ratio_min,omitempty"`
	RatioMax *float64 `json:"ratio_max,omitempty"`
	Rounds   int      `json:"rounds,omitempty"`
	Target   string   `json:"target,omitempty"`
	// Shard is the shard a per-shard figure was read from; figures of the same name differ by it.
	Shard *int `json:"shard,omitempty"`
	// Load is the machine's 1-minute load average when the figure was taken.
	Load *float64 `json:"load,omitempty"`
}

// Compare builds a figure that states value next to its baseline; ratio is value/baseline.
func Compare(name string, value, baseline float64, unit, target string) Figure {
	f := Figure{Name: name, Value: value, Unit: unit, Target: target, Baseline: &baseline}
	if baseline != 0 {
		r := value / baseline
		f.Ratio = &r
	}
	return f
}

// CompareRate is Compare for rates, where more is better: ratio is baseline/value, so below
// 1 means ahead as for times and sizes.
func CompareRate(name string, value, baseline float64, unit, target string) Figure {
	f := Compare(name, value, baseline, unit, target)
	f.Ratio = nil
	if value != 0 {
		r := baseline / value
		f.Ratio = &r
	}
	return f
}

// Emit writes f as one JSON line.
func Emit(w io.Writer, f Figure) { _ = json.NewEncoder(w).Encode(f) }

// Table writes the figures as a table.
func Table(w io.Writer, all []Figure) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tVALUE\tUNIT\tBASELINE\tRATIO\tLOAD\tTARGET")
	for _, f := range all {
		base, ratio, load := "-", "-", "-"
		if f.Baseline != nil {
			base = fmt.Sprintf("%.4g", *f.Baseline)
		}
		if f.Ratio != nil {
			ratio = spread(f)
		}
		if f.Load != nil {
			load = fmt.Sprintf("%.1f", *f.Load)
		}
		name := f.Name
		if f.Shard != nil {
			name += fmt.Sprintf(" (shard %d)", *f.Shard)
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t%s\t%s\t%s\n", name, f.Value, f.Unit, base, ratio, load, f.Target)
	}
	_ = tw.Flush()
}
