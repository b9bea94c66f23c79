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

package agentsession

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

func TestRestoreAsked(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	session := func(phase sessionsv1alpha1.SessionPhase, ann map[string]string) *sessionsv1alpha1.AgentSession {
		s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}
		s.Status.Phase, s.Status.SessionID = phase, "sid"
		return s
	}
	past, future := now.Add(-time.Minute).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339)
	cases := map[string]struct {
		s    *sessionsv1alpha1.AgentSession
		want bool
	}{
		"archived, asked":             {session(sessionsv1alpha1.SessionArchived, map[string]string{sessionsv1alpha1.RestoreAnnotation: "sid"}), true},
		"archive-at later than now":   {session(sessionsv1alpha1.SessionArchived, map[string]string{sessionsv1alpha1.RestoreAnnotation: "sid", sessionsv1alpha1.ArchiveAtAnnotation: future}), true},
		"an archive since outweighs":  {session(sessionsv1alpha1.SessionArchived, map[string]string{sessionsv1alpha1.RestoreAnnotation: "sid", sessionsv1alpha1.ArchiveAtAnnotation: past}), false},
		"another sessionId":           {session(sessionsv1alpha1.SessionArchived, map[string]string{sessionsv1alpha1.RestoreAnnotation: "old"}), false},
		"not asked":                   {session(sessionsv1alpha1.SessionArchived, nil), false},
		"active: a restore left over": {session(sessionsv1alpha1.SessionActive, map[string]string{sessionsv1alpha1.RestoreAnnotation: "sid"}), false},
		"no transcript yet":           {&sessionsv1alpha1.AgentSession{Status: sessionsv1alpha1.AgentSessionStatus{Phase: sessionsv1alpha1.SessionArchived}}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := restoreAsked(tc.s, now); got != tc.want {
				t.Errorf("restoreAsked = %v, want %v", got, tc.want)
			}
		})
	}
}

// A restore the store can serve makes the session Active; one whose transcript is gone
// leaves it Archived with the reason RestoreFailed.
func TestRestoreWhenAsked(t *testing.T) {
	ctx := context.Background()
	st := transcripttest.NewMemoryStore()
	if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: "team", SessionID: "kept", SessionKey: "agent:a:main"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Archive(ctx, "team", "kept"); err != nil {
		t.Fatal(err)
	}
	r := &AgentSessionReconciler{Store: st, Clock: clocktesting.NewFakeClock(time.Now())}
	type got struct {
		Phase  sessionsv1alpha1.SessionPhase
		Reason string
	}
	for id, want := range map[string]got{
		"kept": {Phase: sessionsv1alpha1.SessionActive},
		"gone": {Phase: sessionsv1alpha1.SessionArchived, Reason: sessionsv1alpha1.ReasonRestoreFailed},
	} {
		t.Run(id, func(t *testing.T) {
			s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Annotations: map[string]string{sessionsv1alpha1.RestoreAnnotation: id}}}
			s.Status.Phase, s.Status.SessionID = sessionsv1alpha1.SessionArchived, id
			meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: sessionsv1alpha1.ConditionArchived, Status: metav1.ConditionTrue, Reason: "Archived"})
			if err := r.restoreWhenAsked(ctx, s); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got{Phase: s.Status.Phase, Reason: archivedReason(s)}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := st.Stats(ctx, "team", "kept"); err != nil {
		t.Errorf("the restored transcript is not live: %v", err)
	}
}
