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

func TestCheckReadsTheBoundOfTheTarget(t *testing.T) {
	type verdict struct {
		Checked, Met bool
		Bound        string
	}
	cases := map[string]struct {
		fig  Figure
		want verdict
	}{
		"under a bound":           {Figure{Value: 58, Target: "< 100 (wall, one turn after another)"}, verdict{true, true, "< 100"}},
		"over a bound":            {Figure{Value: 248, Target: "< 100 (wall)"}, verdict{true, false, "< 100"}},
		"at a strict bound":       {Figure{Value: 100, Target: "< 100"}, verdict{true, false, "< 100"}},
		"at an inclusive bound":   {Figure{Value: 3, Target: "<= 3 without reply-back"}, verdict{true, true, "<= 3"}},
		"a rate with commas":      {Figure{Value: 19000, Target: ">= 20,000 (durable)"}, verdict{true, false, ">= 20,000"}},
		"a ratio within":          {Compare("cpu", 20, 10, "cpu-ms", "ratio <= 2.5 at concurrency 20"), verdict{true, true, "ratio <= 2.5"}},
		"a ratio beyond":          {Compare("cpu", 26.2, 8.5, "cpu-ms", "ratio <= 2.5"), verdict{true, false, "ratio <= 2.5"}},
		"a ratio with ≤ and ×":    {Compare("p50", 20, 10, "ms", "ratio ≤ ×2.0"), verdict{true, true, "ratio <= 2.0"}},
		"a ratio without a base":  {Figure{Value: 1, Target: "ratio <= 2.5"}, verdict{true, false, "ratio <= 2.5"}},
		"an exact count":          {Figure{Value: 0, Target: "0: the engine writes no status"}, verdict{true, true, "= 0"}},
		"an exact count missed":   {Figure{Value: 1, Target: "0: every send finished"}, verdict{true, false, "= 0"}},
		"a description":           {Figure{Value: 3, Target: "heap allocations per turn"}, verdict{}},
		"a number in the text":    {Figure{Value: 3, Target: "1,000 subscribers of one namespace"}, verdict{}},
		"no target":               {Figure{Value: 3}, verdict{}},
		"a bound in parentheses":  {Figure{Value: 3, Target: "independent of length (< 10)"}, verdict{}},
		"value over, ratio under": {Compare("x", 300, 200, "ms", "ratio <= 1.5"), verdict{true, true, "ratio <= 1.5"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			v := Check(c.fig)
			if d := cmp.Diff(c.want, verdict{v.Checked, v.Met, v.Bound}); d != "" {
				t.Errorf("verdict (-want +got):\n%s", d)
			}
		})
	}
}

func TestCheckTableFailsOnAMissedTarget(t *testing.T) {
	var b bytes.Buffer
	if !CheckTable(&b, []Figure{{Name: "a", Value: 1, Target: "< 2"}, {Name: "b", Value: 5, Target: "per turn"}}) {
		t.Errorf("figures within their targets failed:\n%s", b.String())
	}
	b.Reset()
	if CheckTable(&b, []Figure{{Name: "a", Value: 1, Target: "< 2"}, {Name: "c", Value: 3, Target: "< 2"}}) {
		t.Errorf("a missed target passed:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "MISSED") {
		t.Errorf("the table does not name the miss:\n%s", b.String())
	}
}
