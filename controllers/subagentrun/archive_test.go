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

package subagentrun

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestArchiveAfterAndRunTimeout(t *testing.T) {
	pol := &sessionsv1alpha1.SessionPolicy{Spec: sessionsv1alpha1.SessionPolicySpec{ArchiveAfterMinutes: ptr.To[int32](5)}}
	agent := &sessionsv1alpha1.Agent{Spec: sessionsv1alpha1.AgentSpec{Subagents: sessionsv1alpha1.SubagentsSpec{ArchiveAfterMinutes: ptr.To[int32](20), RunTimeoutSeconds: ptr.To[int32](90)}}}
	cases := map[string]struct {
		got, want time.Duration
	}{
		"policy wins":                {archiveAfter(pol, agent), 5 * time.Minute},
		"agent next":                 {archiveAfter(nil, agent), 20 * time.Minute},
		"default 60m":                {archiveAfter(nil, nil), time.Hour},
		"run timeout from the spec":  {runTimeout(&sessionsv1alpha1.SubagentRun{Spec: sessionsv1alpha1.SubagentRunSpec{RunTimeoutSeconds: ptr.To[int32](7)}}, agent), 7 * time.Second},
		"run timeout from the agent": {runTimeout(&sessionsv1alpha1.SubagentRun{}, agent), 90 * time.Second},
		"no run timeout":             {runTimeout(&sessionsv1alpha1.SubagentRun{}, &sessionsv1alpha1.Agent{}), 0},
		"spec 0 means none":          {runTimeout(&sessionsv1alpha1.SubagentRun{Spec: sessionsv1alpha1.SubagentRunSpec{RunTimeoutSeconds: ptr.To[int32](0)}}, agent), 0},
	}
	for name, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: got %s, want %s", name, tc.got, tc.want)
		}
	}
}
