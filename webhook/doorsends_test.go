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

package webhook

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// TestDoorSends: the backstop counts door-made sends per target session and per caller over
// a sliding window; a refused or dry-run send is not counted; sends a window old drop out.
func TestDoorSends(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC))
	d := newDoorSends(clk)
	l := policy.DoorLimits{PerSession: 3, PerCaller: 5, Window: time.Minute}
	admit := func(session, user string, record bool) string {
		if den := d.admit("team", session, user, l, record); den != nil {
			return den.Limit
		}
		return ""
	}
	steps := []struct {
		session, user string
		dryRun        bool
		want          string
	}{
		{session: "s1", user: "relay", dryRun: true},
		{session: "s1", user: "relay"},
		{session: "s1", user: "relay"},
		{session: "s1", user: "relay"},
		{session: "s1", user: "relay", want: policy.LimitDoorSendsPerSession},
		{session: "s1", user: "someone", want: policy.LimitDoorSendsPerSession},
		{session: "s2", user: "relay"},
		{session: "s3", user: "relay"},
		{session: "s4", user: "relay", want: policy.LimitDoorSendsPerCaller},
		{session: "s4", user: "someone"},
	}
	for i, s := range steps {
		if got := admit(s.session, s.user, !s.dryRun); got != s.want {
			t.Errorf("step %d (%s by %s): refused for %q, want %q", i, s.session, s.user, got, s.want)
		}
	}
	clk.Step(59 * time.Second)
	if got := admit("s2", "relay", true); got != policy.LimitDoorSendsPerCaller {
		t.Errorf("a send within the window was allowed (%q): the window slides, it is not reset at its edge", got)
	}
	clk.Step(time.Second)
	if got := admit("s1", "relay", true); got != "" {
		t.Errorf("a window after the sends, one was refused: %s", got)
	}
}
