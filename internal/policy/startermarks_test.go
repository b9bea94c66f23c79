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
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestStarterMarks(t *testing.T) {
	sched := map[string]string{sessionsv1alpha1.ScheduleLabel: "nightly", "team": "a"}
	hook := map[string]string{sessionsv1alpha1.HookLabel: "ci"}
	cases := map[string]struct {
		old, cur map[string]string
		want     []StarterMark
	}{
		"a create without them":        {cur: map[string]string{"team": "a"}},
		"a create with the schedule's": {cur: sched, want: []StarterMark{{Label: sessionsv1alpha1.ScheduleLabel, Name: "nightly"}}},
		"a create with the hook's":     {cur: hook, want: []StarterMark{{Label: sessionsv1alpha1.HookLabel, Name: "ci"}}},
		"a create with an empty one":   {cur: map[string]string{sessionsv1alpha1.HookLabel: ""}, want: []StarterMark{{Label: sessionsv1alpha1.HookLabel}}},
		"both":                         {cur: map[string]string{sessionsv1alpha1.ScheduleLabel: "s", sessionsv1alpha1.HookLabel: "h"}, want: []StarterMark{{Label: sessionsv1alpha1.ScheduleLabel, Name: "s"}, {Label: sessionsv1alpha1.HookLabel, Name: "h"}}},
		"an update that keeps it":      {old: sched, cur: map[string]string{sessionsv1alpha1.ScheduleLabel: "nightly", "team": "b"}},
		"an update that adds it":       {old: map[string]string{"team": "a"}, cur: sched, want: []StarterMark{{Label: sessionsv1alpha1.ScheduleLabel, Name: "nightly"}}},
		"an update that changes it":    {old: hook, cur: map[string]string{sessionsv1alpha1.HookLabel: "other"}, want: []StarterMark{{Label: sessionsv1alpha1.HookLabel, Name: "other"}}},
		"an update that removes it":    {old: sched, cur: map[string]string{"team": "a"}, want: []StarterMark{{Label: sessionsv1alpha1.ScheduleLabel, Name: "nightly"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, StarterMarks(tc.old, tc.cur)); diff != "" {
				t.Errorf("StarterMarks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStarterMarkDenial(t *testing.T) {
	for label, want := range map[string]string{
		sessionsv1alpha1.ScheduleLabel: "metadata.labels[sessions.agents.dev/schedule]: Forbidden: only the operator's schedule controller sets it",
		sessionsv1alpha1.HookLabel:     "metadata.labels[sessions.agents.dev/hook]: Forbidden: only the operator's hook door sets it",
	} {
		got := StarterMarkDenial(StarterMark{Label: label, Name: "x"}).Error()
		if len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("%s: %q, want it to start with %q", label, got, want)
		}
	}
}
