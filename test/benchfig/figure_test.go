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
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Below 1 means ahead, for times and sizes (ours over theirs) and for rates (theirs over ours).
func TestRatioBelowOneMeansAhead(t *testing.T) {
	cases := map[string]struct {
		fig  Figure
		want float64
	}{
		"a time half the baseline's":     {Compare("t", 5, 10, "ms", ""), 0.5},
		"a size twice the baseline's":    {Compare("s", 20, 10, "B", ""), 2},
		"a rate twice the baseline's":    {CompareRate("r", 20, 10, "sends/s", ""), 0.5},
		"a rate a quarter of baseline's": {CompareRate("r", 5, 20, "sends/s", ""), 4},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if c.fig.Ratio == nil {
				t.Fatal("no ratio")
			}
			if diff := cmp.Diff(c.want, *c.fig.Ratio); diff != "" {
				t.Errorf("ratio (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoRatioAgainstZero(t *testing.T) {
	if f := Compare("t", 5, 0, "ms", ""); f.Ratio != nil {
		t.Errorf("ratio against a zero baseline: %v", *f.Ratio)
	}
	if f := CompareRate("r", 0, 5, "sends/s", ""); f.Ratio != nil {
		t.Errorf("rate ratio with nothing done: %v", *f.Ratio)
	}
}

func TestEmitIsOneJSONLineWithTheLoad(t *testing.T) {
	load := 3.5
	f := Compare("peer_x_ms", 1, 2, "ms", "")
	f.Load = &load
	var buf bytes.Buffer
	Emit(&buf, f)
	if strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("not one line: %q", buf.String())
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "peer_x_ms", "value": 1.0, "unit": "ms", "baseline": 2.0, "ratio": 0.5, "load": 3.5}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
