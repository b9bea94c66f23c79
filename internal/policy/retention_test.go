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
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestRetentionOf(t *testing.T) {
	def := Retention{KeepFor: 7 * 24 * time.Hour, MaxArchived: 1000}
	cases := map[string]struct {
		pol  *sessionsv1alpha1.SessionPolicy
		want Retention
	}{
		"no policy":        {want: def},
		"no retention":     {pol: &sessionsv1alpha1.SessionPolicy{}, want: def},
		"an age":           {pol: withRetention(ptr.To[int32](3600), nil), want: Retention{KeepFor: time.Hour, MaxArchived: 1000}},
		"a count":          {pol: withRetention(nil, ptr.To[int32](5)), want: Retention{KeepFor: def.KeepFor, MaxArchived: 5}},
		"zero keeps none":  {pol: withRetention(ptr.To[int32](0), ptr.To[int32](0)), want: Retention{}},
		"negative ignored": {pol: withRetention(ptr.To[int32](-1), ptr.To[int32](-1)), want: def},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RetentionOf(tc.pol)); diff != "" {
				t.Errorf("RetentionOf (-want +got):\n%s", diff)
			}
		})
	}
}

func withRetention(d, n *int32) *sessionsv1alpha1.SessionPolicy {
	return &sessionsv1alpha1.SessionPolicy{Spec: sessionsv1alpha1.SessionPolicySpec{
		Retention: &sessionsv1alpha1.RetentionSpec{ArchivedSessionsSeconds: d, MaxArchivedSessions: n}}}
}

func TestRetiredSessions(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	ago := func(name string, d time.Duration) ArchivedSession {
		return ArchivedSession{Name: name, ArchivedAt: now.Add(-d)}
	}
	day := 24 * time.Hour
	type got struct {
		Names   []string
		Reasons []string
		Next    time.Duration
	}
	cases := map[string]struct {
		archived []ArchivedSession
		rule     Retention
		want     got
	}{
		"none archived": {rule: Retention{KeepFor: 7 * day, MaxArchived: 10}},
		"all young: wait for the oldest": {
			archived: []ArchivedSession{ago("b", day), ago("a", 2*day)},
			rule:     Retention{KeepFor: 7 * day, MaxArchived: 10},
			want:     got{Next: 5 * day},
		},
		"exactly of age goes": {
			archived: []ArchivedSession{ago("a", 7*day), ago("b", 7*day-time.Second)},
			rule:     Retention{KeepFor: 7 * day, MaxArchived: 10},
			want:     got{Names: []string{"a"}, Reasons: []string{RetiredByAge}, Next: time.Second},
		},
		"over the count: the longest archived go first": {
			archived: []ArchivedSession{ago("new", time.Hour), ago("old", 3*day), ago("mid", 2*day)},
			rule:     Retention{KeepFor: 7 * day, MaxArchived: 1},
			want:     got{Names: []string{"old", "mid"}, Reasons: []string{RetiredByCount, RetiredByCount}, Next: 7*day - time.Hour},
		},
		"age then count, ties by name": {
			archived: []ArchivedSession{ago("z", 8*day), ago("b", day), ago("a", day), ago("c", time.Minute)},
			rule:     Retention{KeepFor: 7 * day, MaxArchived: 2},
			want:     got{Names: []string{"z", "a"}, Reasons: []string{RetiredByAge, RetiredByCount}, Next: 6 * day},
		},
		"zero keeps nothing": {
			archived: []ArchivedSession{ago("a", 0)},
			rule:     Retention{},
			want:     got{Names: []string{"a"}, Reasons: []string{RetiredByAge}},
		},
		"a count of zero with an age": {
			archived: []ArchivedSession{ago("a", time.Hour)},
			rule:     Retention{KeepFor: day},
			want:     got{Names: []string{"a"}, Reasons: []string{RetiredByCount}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			retire, next := RetiredSessions(tc.archived, tc.rule, now)
			g := got{Next: next}
			for _, r := range retire {
				g.Names = append(g.Names, r.Name)
				g.Reasons = append(g.Reasons, r.Reason)
				if r.Message == "" {
					t.Errorf("%s retired without a message", r.Name)
				}
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("RetiredSessions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTranscriptArchived(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	session := func(phase sessionsv1alpha1.SessionPhase, reason, restore string) *sessionsv1alpha1.AgentSession {
		s := &sessionsv1alpha1.AgentSession{}
		s.Status.Phase, s.Status.SessionID = phase, "sid"
		if reason != "" {
			s.Status.Conditions = []metav1.Condition{{Type: sessionsv1alpha1.ConditionArchived, Status: metav1.ConditionTrue, Reason: reason,
				LastTransitionTime: metav1.NewTime(at)}}
		}
		if restore != "" {
			s.Annotations = map[string]string{sessionsv1alpha1.RestoreAnnotation: restore}
		}
		return s
	}
	noTranscript := session(sessionsv1alpha1.SessionArchived, "Archived", "")
	noTranscript.Status.SessionID = ""
	cases := map[string]struct {
		s    *sessionsv1alpha1.AgentSession
		want bool
	}{
		"archived":                          {session(sessionsv1alpha1.SessionArchived, "Archived", ""), true},
		"a restore of an earlier sessionId": {session(sessionsv1alpha1.SessionArchived, "Archived", "old"), true},
		"a restore asked: maybe live again": {session(sessionsv1alpha1.SessionArchived, "Archived", "sid"), false},
		"a restore that failed":             {session(sessionsv1alpha1.SessionArchived, sessionsv1alpha1.ReasonRestoreFailed, "sid"), true},
		"archived, its condition not yet":   {session(sessionsv1alpha1.SessionArchived, "", ""), false},
		"active":                            {session(sessionsv1alpha1.SessionActive, "", ""), false},
		"no transcript":                     {noTranscript, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := TranscriptArchived(tc.s)
			if ok != tc.want || (ok && !got.Equal(at)) {
				t.Errorf("TranscriptArchived = %v, %v; want %v at %v", got, ok, tc.want, at)
			}
		})
	}
}
