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
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompareRounds(t *testing.T) {
	type got struct {
		Value, Baseline, Ratio, Min, Max float64
		Rounds                           int
	}
	cases := map[string]struct {
		ours, base []float64
		want       got
	}{
		// A neighbour that doubles both sides of round 2 moves neither the ratio's median
		// nor its spread, though it doubles that round's values.
		"a loaded round":                       {[]float64{20, 40, 21}, []float64{10, 20, 10}, got{21, 10, 2, 2, 2.1, 3}},
		"an even count":                        {[]float64{10, 30, 20, 40}, []float64{10, 10, 10, 10}, got{25, 10, 2.5, 1, 4, 4}},
		"a zero baseline leaves its round out": {[]float64{20, 30, 28}, []float64{10, 0, 14}, got{28, 10, 2, 2, 2, 2}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f := CompareRounds("cpu_ms_per_send", c.ours, c.base, "cpu-ms", "ratio <= 1.7")
			g := got{Value: f.Value, Baseline: *f.Baseline, Ratio: *f.Ratio, Min: *f.RatioMin, Max: *f.RatioMax, Rounds: f.Rounds}
			if d := cmp.Diff(c.want, g); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestCheckJudgesTheMedianRatioAndPrintsItsSpread(t *testing.T) {
	// Two rounds of three over the bound: the median is within it, and the check passes.
	f := CompareRounds("cpu_ms_per_send", []float64{16, 30, 18}, []float64{10, 10, 12}, "cpu-ms", "ratio <= 1.7 (median of interleaved rounds)")
	var b bytes.Buffer
	if !CheckTable(&b, []Figure{f}) {
		t.Errorf("a median within its bound failed:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "1.6 (1.5–3 over 3)") {
		t.Errorf("the check does not print the rounds' spread:\n%s", b.String())
	}
	f = CompareRounds("cpu_ms_per_send", []float64{18, 30, 20}, []float64{10, 10, 10}, "cpu-ms", "ratio <= 1.7")
	if CheckTable(&b, []Figure{f}) {
		t.Errorf("a median over its bound passed:\n%s", b.String())
	}
}
