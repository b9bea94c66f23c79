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

package policy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestJudgeChainMember(t *testing.T) {
	const a, b, c = "agent:a:main", "agent:b:main", "agent:c:main"
	ab, ba, bc, ca := ChainMember{a, b}, ChainMember{b, a}, ChainMember{b, c}, ChainMember{c, a}
	spawn := ChainMember{Requester: a}
	n := func(k int, m ChainMember) []ChainMember {
		out := make([]ChainMember, k)
		for i := range out {
			out[i] = m
		}
		return out
	}
	limits := func(sends, pairs int32) *sessionsv1alpha1.SessionPolicySpec {
		return &sessionsv1alpha1.SessionPolicySpec{Limits: &sessionsv1alpha1.ChainLimits{MaxSendsPerChain: ptr.To(sends), MaxPairRepeats: ptr.To(pairs)}}
	}
	cases := map[string]struct {
		members []ChainMember
		next    ChainMember
		p       *sessionsv1alpha1.SessionPolicySpec
		want    string // the limit hit, "" when allowed
	}{
		"the first tool call of a chain":               {next: ab},
		"A to B to A, first lap":                       {members: []ChainMember{ab, ba}, next: ab},
		"A to B to A, second lap is stopped":           {members: []ChainMember{ab, ba, ab, ba}, next: ab, want: LimitMaxPairRepeats},
		"a triangle's first lap":                       {members: []ChainMember{ab, bc}, next: ca},
		"a triangle's second lap is stopped":           {members: []ChainMember{ab, bc, ca, ab, bc, ca}, next: ab, want: LimitMaxPairRepeats},
		"spawns make no pair":                          {members: n(10, spawn), next: spawn},
		"19 with the root, the 20th joins (default)":   {members: n(18, spawn), next: spawn},
		"20 with the root, the 21st is stopped":        {members: n(19, spawn), next: spawn, want: LimitMaxSendsPerChain},
		"the chain limit before the pair limit":        {members: n(19, ab), next: ab, want: LimitMaxSendsPerChain},
		"the policy's chain limit":                     {members: n(4, spawn), next: spawn, p: limits(5, 2), want: LimitMaxSendsPerChain},
		"the policy's pair limit":                      {members: []ChainMember{ab}, next: ab, p: limits(20, 1), want: LimitMaxPairRepeats},
		"a higher pair limit lets a loop go on longer": {members: []ChainMember{ab, ba, ab, ba}, next: ab, p: limits(20, 3)},
		"a policy without limits takes the defaults":   {members: n(19, spawn), next: spawn, p: &sessionsv1alpha1.SessionPolicySpec{}, want: LimitMaxSendsPerChain},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := JudgeChainMember(tc.members, tc.next, tc.p)
			got := ""
			if d != nil {
				got = d.Limit
				if !strings.Contains(d.Message, "spec.limits."+d.Limit) || !strings.Contains(d.Message, "stop sending") {
					t.Errorf("the message names neither the limit nor what to do: %q", d.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("limit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextChain(t *testing.T) {
	type marks struct{ Labels, Annotations map[string]string }
	cases := map[string]struct {
		labels, annotations map[string]string
		uid                 string
		want                marks
	}{
		"a root's tool call joins the root's chain": {uid: "u1",
			want: marks{map[string]string{sessionsv1alpha1.ChainLabel: "u1"}, map[string]string{sessionsv1alpha1.ChainRootAnnotation: "SessionSend/seed"}}},
		"a member's tool call joins its chain": {uid: "u2",
			labels: map[string]string{sessionsv1alpha1.ChainLabel: "u0"}, annotations: map[string]string{sessionsv1alpha1.ChainRootAnnotation: "SubagentRun/r0"},
			want: marks{map[string]string{sessionsv1alpha1.ChainLabel: "u0"}, map[string]string{sessionsv1alpha1.ChainRootAnnotation: "SubagentRun/r0"}}},
		"a turn nobody owns starts no chain": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l, a := NextChain(tc.labels, tc.annotations, tc.uid, "SessionSend", "seed")
			if diff := cmp.Diff(tc.want, marks{l, a}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
