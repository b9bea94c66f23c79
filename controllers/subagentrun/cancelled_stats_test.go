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

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestCancelledStats(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-90*time.Second - 1234*time.Microsecond))
	child := &sessionsv1alpha1.AgentSession{Status: sessionsv1alpha1.AgentSessionStatus{SessionID: "sid", TranscriptPath: "/t/sid.jsonl"}}
	cases := map[string]struct {
		st    sessionsv1alpha1.SubagentRunStatus
		child *sessionsv1alpha1.AgentSession
		want  sessionsv1alpha1.RunStats
	}{
		"cancelled before it started": {
			st:   sessionsv1alpha1.SubagentRunStatus{ChildSessionKey: "agent:a:subagent:1"},
			want: sessionsv1alpha1.RunStats{Runtime: "0s", SessionKey: "agent:a:subagent:1"},
		},
		"cancelled while its task ran": {
			st: sessionsv1alpha1.SubagentRunStatus{ChildSessionKey: "agent:a:subagent:1", OwnerStatus: sessionsv1alpha1.OwnerStatus{StartedAt: &started},
				Usage: &sessionsv1alpha1.Usage{InputTokens: 12, OutputTokens: 3}},
			child: child,
			want: sessionsv1alpha1.RunStats{Runtime: "1m30.001s", InputTokens: 12, OutputTokens: 3, SessionKey: "agent:a:subagent:1",
				SessionID: "sid", TranscriptPath: "/t/sid.jsonl"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, *cancelledStats(&tc.st, tc.child, now)); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
		})
	}
}
