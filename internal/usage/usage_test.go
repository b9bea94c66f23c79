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

package usage

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestPrice(t *testing.T) {
	cases := map[string]struct {
		p                     *sessionsv1alpha1.Pricing
		input, output, cached int64
		wantNanos             int64
		wantCurrency, wantErr string
	}{
		"unpriced":                 {p: nil, input: 1000, output: 10},
		"per million":              {p: &sessionsv1alpha1.Pricing{InputPerMillion: "3", OutputPerMillion: "15"}, input: 1_000_000, output: 100_000, wantNanos: 4_500_000_000, wantCurrency: "USD"},
		"small turns keep cents":   {p: &sessionsv1alpha1.Pricing{InputPerMillion: "3", OutputPerMillion: "15"}, input: 120, output: 7, wantNanos: 465_000, wantCurrency: "USD"},
		"cached at cached price":   {p: &sessionsv1alpha1.Pricing{InputPerMillion: "3", OutputPerMillion: "15", CachedInputPerMillion: "0.3", Currency: "EUR"}, input: 1_000_000, cached: 800_000, wantNanos: 840_000_000, wantCurrency: "EUR"},
		"cached as input unpriced": {p: &sessionsv1alpha1.Pricing{InputPerMillion: "2"}, input: 1_000_000, cached: 500_000, wantNanos: 2_000_000_000, wantCurrency: "USD"},
		"bad price":                {p: &sessionsv1alpha1.Pricing{InputPerMillion: "three"}, input: 1, wantErr: "pricing.inputPerMillion: want a decimal like 3 or 0.075 (at most 9 decimals)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Price(tc.p, tc.input, tc.output, tc.cached)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.CostNanos != tc.wantNanos || got.Currency != tc.wantCurrency {
				t.Fatalf("Price = %+v, %v; want %d nanos %q", got, err, tc.wantNanos, tc.wantCurrency)
			}
		})
	}
}

func TestNanos(t *testing.T) {
	for s, n := range map[string]int64{"0": 0, "3": 3_000_000_000, "0.075": 75_000_000, "0.000000001": 1, "12.5": 12_500_000_000} {
		got, err := ParseNanos(s)
		if err != nil || got != n {
			t.Errorf("ParseNanos(%q) = %d, %v; want %d", s, got, err, n)
		}
		if back := FormatNanos(n); back != s {
			t.Errorf("FormatNanos(%d) = %q, want %q", n, back, s)
		}
	}
	for _, bad := range []string{"-1", "1.0000000001", "x", ".5", "+2"} {
		if _, err := ParseNanos(bad); err == nil {
			t.Errorf("ParseNanos(%q) accepted", bad)
		}
	}
}

// A run tree three deep: each run adds its own turns and merges its children's usage, so the
// root reports the whole tree (and a child that merged a grandchild keeps its share when the
// grandchild is deleted).
func TestRollUp(t *testing.T) {
	usd := &sessionsv1alpha1.Pricing{InputPerMillion: "1", OutputPerMillion: "2"}
	turn := func(in, out int64) Turn { tt, _ := Price(usd, in, out, 0); return tt }
	grandchild := Add(nil, turn(1_000_000, 0))                               // 1 USD
	child := Merge(Add(Add(nil, turn(0, 500_000)), turn(10, 0)), grandchild) // 1 + 0.00001 + 1
	root := Merge(Add(nil, turn(500_000, 0)), child)                         // 0.5 + that
	want := &sessionsv1alpha1.Usage{InputTokens: 1_500_010, OutputTokens: 500_000, Turns: 4, Cost: "2.50001", Currency: "USD"}
	if d := cmp.Diff(want, root); d != "" {
		t.Errorf("root (-want +got):\n%s", d)
	}
	eur := Add(nil, Turn{Input: 1, CostNanos: 5, Currency: "EUR"})
	if got := Merge(root.DeepCopy(), eur); got.Cost != Mixed || got.Currency != "USD" {
		t.Errorf("two currencies: cost %q %q, want mixed USD", got.Cost, got.Currency)
	}
	if got := Add(nil, Turn{Input: 3}); got.Cost != "" || got.Currency != "" || got.Turns != 1 {
		t.Errorf("unpriced turn: %+v", got)
	}
}
