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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestAbovePolicy(t *testing.T) {
	ceiling := &sessionsv1alpha1.Budget{MaxCost: "1", MaxTokens: ptr.To[int64](200000), MaxTurns: ptr.To[int32](20)}
	cases := map[string]struct {
		own, ceiling *sessionsv1alpha1.Budget
		want         []string // substrings; none: allowed
	}{
		"no own budget":       {nil, ceiling, nil},
		"no ceiling":          {&sessionsv1alpha1.Budget{MaxCost: "100"}, nil, nil},
		"below":               {&sessionsv1alpha1.Budget{MaxCost: "0.5", MaxTokens: ptr.To[int64](10), MaxTurns: ptr.To[int32](20)}, ceiling, nil},
		"cost above":          {&sessionsv1alpha1.Budget{MaxCost: "1.000000001"}, ceiling, []string{"budget", `maxCost "1.000000001" is above "1"`, "spec.budgets.perSend"}},
		"tokens and turns":    {&sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](200001), MaxTurns: ptr.To[int32](21)}, ceiling, []string{"maxTokens 200001 is above 200000", "maxTurns 21 is above 20"}},
		"field not in policy": {&sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](99)}, &sessionsv1alpha1.Budget{MaxCost: "1"}, nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := AbovePolicy(c.own, c.ceiling, "perSend")
			if len(c.want) == 0 && got != "" {
				t.Fatalf("want allowed, got %q", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
}

func TestExceeded(t *testing.T) {
	b := sessionsv1alpha1.Budget{MaxCost: "0.01", MaxTokens: ptr.To[int64](1000), MaxTurns: ptr.To[int32](3)}
	cases := map[string]struct {
		spent Spent
		want  string
	}{
		"under":          {Spent{Tokens: 999, CostNanos: 9_999_999, Turns: 3}, ""},
		"cost reached":   {Spent{CostNanos: 10_000_000}, `budget exceeded: the send cost 0.01 of its maxCost "0.01"`},
		"tokens reached": {Spent{Tokens: 1000}, "budget exceeded: the send used 1000 tokens of its maxTokens 1000"},
		"a fourth turn":  {Spent{Turns: 4}, "budget exceeded: the send would begin turn 4, over its maxTurns 3"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Exceeded(b, c.spent, "the send")); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestEffectiveBudget(t *testing.T) {
	def := &sessionsv1alpha1.Budget{MaxCost: "1", MaxTokens: ptr.To[int64](100)}
	got := EffectiveBudget(&sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](50), MaxTurns: ptr.To[int32](2)}, def)
	want := sessionsv1alpha1.Budget{MaxCost: "1", MaxTokens: ptr.To[int64](50), MaxTurns: ptr.To[int32](2)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

func TestNamespaceSpent(t *testing.T) {
	now := time.Date(2026, 11, 25, 17, 30, 0, 0, time.UTC)
	day := metav1.Duration{Duration: 24 * time.Hour}
	midnight := metav1.NewTime(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	yesterday := metav1.NewTime(midnight.Add(-24 * time.Hour))
	b := &sessionsv1alpha1.NamespaceBudget{Window: day, MaxCost: "50", MaxTokens: ptr.To[int64](5000000)}
	cases := map[string]struct {
		spend *sessionsv1alpha1.Spend
		want  string
	}{
		"nothing spent": {nil, ""},
		"under":         {&sessionsv1alpha1.Spend{WindowStart: &midnight, Cost: "49.99", Tokens: 10}, ""},
		"cost reached": {&sessionsv1alpha1.Spend{WindowStart: &midnight, Cost: "50.5", Tokens: 10},
			`namespace budget spent: the namespace's turns cost 50.5 of its maxCost "50" in the 24h0m0s window since 2026-11-25T00:00:00Z (SessionPolicy spec.budgets.namespace); the window resets at 2026-11-26T00:00:00Z`},
		"tokens reached": {&sessionsv1alpha1.Spend{WindowStart: &midnight, Tokens: 5000000},
			"namespace budget spent: the namespace's turns used 5000000 tokens of its maxTokens 5000000 in the 24h0m0s window since 2026-11-25T00:00:00Z (SessionPolicy spec.budgets.namespace); the window resets at 2026-11-26T00:00:00Z"},
		"an earlier window": {&sessionsv1alpha1.Spend{WindowStart: &yesterday, Cost: "500"}, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, NamespaceSpent(b, WindowSpent(b, c.spend, now), now)); diff != "" {
				t.Error(diff)
			}
		})
	}
	if got := WindowStart(now, time.Hour); !got.Equal(time.Date(2026, 11, 25, 17, 0, 0, 0, time.UTC)) {
		t.Errorf("hour window starts at %v", got)
	}
}

func TestStopReason(t *testing.T) {
	now := time.Date(2026, 11, 25, 17, 30, 0, 0, time.UTC)
	b := sessionsv1alpha1.Budget{MaxCost: "0.01", MaxTokens: ptr.To[int64](1000), MaxTurns: ptr.To[int32](3)}
	ns := &sessionsv1alpha1.NamespaceBudget{Window: metav1.Duration{Duration: time.Hour}, MaxTokens: ptr.To[int64](10)}
	cases := map[string]struct {
		why  string
		want bool
	}{
		"cost":                  {Exceeded(b, Spent{CostNanos: 10_000_000}, "the send"), true},
		"tokens":                {Exceeded(b, Spent{Tokens: 1000}, "the run tree of subagentrun/a"), true},
		"turns":                 {Exceeded(b, Spent{Turns: 4}, "the run"), true},
		"namespace window":      {NamespaceSpent(ns, Spent{Tokens: 10}, now), true},
		"another failure":       {"model call failed: 500 Internal Server Error", false},
		"the words mid-message": {"tool said: budget exceeded: try later", false},
		"the bare error":        {"budget exceeded", false},
		"nothing":               {"", false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := StopReason(c.why); got != c.want {
				t.Errorf("StopReason(%q) = %v, want %v", c.why, got, c.want)
			}
		})
	}
}

func TestLeft(t *testing.T) {
	cases := map[string]struct {
		b     sessionsv1alpha1.Budget
		spent Spent
		want  *sessionsv1alpha1.Budget
	}{
		"nothing bounded": {spent: Spent{Turns: 3}},
		"some left": {b: sessionsv1alpha1.Budget{MaxCost: "1", MaxTokens: ptr.To[int64](100), MaxTurns: ptr.To[int32](4)},
			spent: Spent{CostNanos: 250_000_000, Tokens: 40, Turns: 1},
			want:  &sessionsv1alpha1.Budget{MaxCost: "0.75", MaxTokens: ptr.To[int64](60), MaxTurns: ptr.To[int32](3)}},
		"overspent is none left, not less": {b: sessionsv1alpha1.Budget{MaxCost: "1", MaxTurns: ptr.To[int32](2)},
			spent: Spent{CostNanos: 2_000_000_000, Turns: 5},
			want:  &sessionsv1alpha1.Budget{MaxCost: "0", MaxTurns: ptr.To[int32](0)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Left(tc.b, tc.spent)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestNarrow: what a caller carries only narrows; a claimed larger budget gives way.
func TestNarrow(t *testing.T) {
	ours := &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](3), MaxCost: "0.5"}
	cases := map[string]struct {
		carried, ours, want *sessionsv1alpha1.Budget
	}{
		"nothing either side": {},
		"only ours":           {ours: ours, want: ours},
		"a larger claim gives way, a field only it bounds stays": {
			carried: &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](1000), MaxCost: "100", MaxTokens: ptr.To[int64](1 << 40)}, ours: ours,
			want: &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](3), MaxCost: "0.5", MaxTokens: ptr.To[int64](1 << 40)}},
		"a smaller carried budget stays": {carried: &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](1), MaxCost: "0.25"}, ours: ours,
			want: &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](1), MaxCost: "0.25"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Narrow(tc.carried, tc.ours)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
