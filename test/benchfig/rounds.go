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

package benchfig

import (
	"fmt"
	"slices"
)

// CompareRounds states a figure measured in repeated rounds next to its baseline measured in
// the same rounds, interleaved with it: value and baseline are the medians of each side's
// rounds, the ratio is the median of the rounds' own ratios (each round's two sides ran
// under the same load, so their ratio is what a neighbour moves least), and RatioMin and
// RatioMax are the spread of those ratios. ours and base hold one value per round, in the
// same order; a round whose baseline is 0 has no ratio.
func CompareRounds(name string, ours, base []float64, unit, target string) Figure {
	f := Figure{Name: name, Value: Median(ours), Unit: unit, Target: target}
	b := Median(base)
	f.Baseline = &b
	var ratios []float64
	for i := range min(len(ours), len(base)) {
		if base[i] != 0 {
			ratios = append(ratios, ours[i]/base[i])
		}
	}
	if len(ratios) == 0 {
		return f
	}
	r, lo, hi := Median(ratios), slices.Min(ratios), slices.Max(ratios)
	f.Ratio, f.RatioMin, f.RatioMax = &r, &lo, &hi
	f.Rounds = len(ratios)
	return f
}

// Median is the middle of v (the mean of the two middle values for an even count), 0 for none.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// spread is a figure's ratio with the spread of its rounds, "2.1 (1.9–2.4 over 5)", or the
// ratio alone.
func spread(f Figure) string {
	if f.Ratio == nil {
		return "-"
	}
	if f.RatioMin == nil || f.RatioMax == nil {
		return fmt.Sprintf("%.4g", *f.Ratio)
	}
	return fmt.Sprintf("%.3g (%.3g–%.3g over %d)", *f.Ratio, *f.RatioMin, *f.RatioMax, f.Rounds)
}
