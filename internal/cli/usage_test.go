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

package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestUsageTable(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	session := func(key, agent string, updated time.Time, u *sessionsv1alpha1.Usage) sessionsv1alpha1.AgentSession {
		return sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agent},
			Status: sessionsv1alpha1.AgentSessionStatus{Usage: u, UpdatedAt: &metav1.Time{Time: updated}}}
	}
	sessions := []sessionsv1alpha1.AgentSession{
		session("agent:main:main", "main", now, &sessionsv1alpha1.Usage{InputTokens: 100, OutputTokens: 10, Turns: 2, Cost: "0.0005", Currency: "USD"}),
		session("agent:main:telegram:dm:7", "main", now.Add(-48*time.Hour), &sessionsv1alpha1.Usage{InputTokens: 50, OutputTokens: 5, Turns: 1, Cost: "0.00025", Currency: "USD"}),
		session("agent:research:main", "research", now, &sessionsv1alpha1.Usage{InputTokens: 7, Turns: 1}),
		session("agent:idle:main", "idle", now, nil),
	}
	cases := map[string]struct {
		by, agent string
		after     time.Time
		want      string
	}{
		"by agent": {by: "agent", want: "" +
			"AGENT     TURNS  INPUT  OUTPUT  CACHED  COST         BUDGET\n" +
			"main      3      150    15      0       0.00075 USD  -\n" +
			"research  1      7      0       0       -            -\n"},
		"by session since a day, one agent": {by: "session", agent: "main", after: now.Add(-24 * time.Hour), want: "" +
			"SESSION          AGENT  TURNS  INPUT  OUTPUT  CACHED  COST        BUDGET\n" +
			"agent:main:main  main   2      100    10      0       0.0005 USD  -\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			printUsage(&out, tc.by, sessionUsageRows(sessions, tc.by == "agent", tc.agent, tc.after))
			if d := cmp.Diff(tc.want, out.String()); d != "" {
				t.Errorf("table (-want +got):\n%s", d)
			}
		})
	}

	runs := []sessionsv1alpha1.SubagentRun{{ObjectMeta: metav1.ObjectMeta{Name: "spawn-a"}, Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "research",
		Budget: &sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](48)}},
		Status: sessionsv1alpha1.SubagentRunStatus{Usage: &sessionsv1alpha1.Usage{InputTokens: 9, OutputTokens: 3, Turns: 4, Cost: "1.5", Currency: "EUR"}}}}
	var out bytes.Buffer
	perRun := &sessionsv1alpha1.Budget{MaxCost: "5", MaxTokens: ptr.To[int64](1000), MaxTurns: ptr.To[int32](200)}
	printUsage(&out, "run", runUsageRows(runs, "", time.Time{}, perRun))
	want := "RUN      AGENT     TURNS  INPUT  OUTPUT  CACHED  COST     BUDGET\n" +
		"spawn-a  research  4      9      3       0       1.5 EUR  cost 1.5/5 (30%), tokens 12/48 (25%), turns 4/200 (2%)\n"
	if d := cmp.Diff(want, out.String()); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}

	out.Reset()
	start := metav1.NewTime(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	printNamespaceBudget(&out, &sessionsv1alpha1.SessionPolicy{
		Spec: sessionsv1alpha1.SessionPolicySpec{Budgets: &sessionsv1alpha1.Budgets{Namespace: &sessionsv1alpha1.NamespaceBudget{
			Window: metav1.Duration{Duration: 24 * time.Hour}, MaxCost: "50", MaxTokens: ptr.To[int64](5000000)}}},
		Status: sessionsv1alpha1.SessionPolicyStatus{Spend: &sessionsv1alpha1.Spend{WindowStart: &start, Cost: "40", Tokens: 100000}}}, now)
	want = "NAMESPACE BUDGET: cost 40/50 (80%), tokens 100000/5000000 (2%) in the 24h0m0s window since 2026-11-24T00:00:00Z (resets 2026-11-25T00:00:00Z)\n"
	if d := cmp.Diff(want, out.String()); d != "" {
		t.Errorf("namespace budget (-want +got):\n%s", d)
	}
}
