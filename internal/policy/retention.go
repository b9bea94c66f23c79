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
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Retention is a namespace's rule for archived sessions' objects (spec.retention).
type Retention struct {
	// KeepFor is how long a session stays archived with its object.
	KeepFor time.Duration
	// MaxArchived is how many archived sessions keep their object at most.
	MaxArchived int
}

// RetentionOf is the rule of a namespace's SessionPolicy, its defaults where pol (nil: the
// namespace has none) sets nothing.
func RetentionOf(pol *sessionsv1alpha1.SessionPolicy) Retention {
	r := Retention{KeepFor: sessionsv1alpha1.DefaultArchivedSessionsRetention, MaxArchived: sessionsv1alpha1.DefaultMaxArchivedSessions}
	if pol == nil || pol.Spec.Retention == nil {
		return r
	}
	if d := pol.Spec.Retention.ArchivedSessionsSeconds; d != nil && *d >= 0 {
		r.KeepFor = time.Duration(*d) * time.Second
	}
	if m := pol.Spec.Retention.MaxArchivedSessions; m != nil && *m >= 0 {
		r.MaxArchived = int(*m)
	}
	return r
}

// ArchivedSession is what the retention reads of an archived session: its object name and
// when it was archived (its Archived condition's last transition).
type ArchivedSession struct {
	Name       string
	ArchivedAt time.Time
}

// TranscriptArchived is when s was archived, for a session whose transcript is archived
// and stays so: archived, with a transcript, its Archived condition True, and no restore of
// it asked and pending (one that failed, RestoreFailed, has nothing left to restore). Only
// such a session is retired.
func TranscriptArchived(s *sessionsv1alpha1.AgentSession) (time.Time, bool) {
	if s.Status.Phase != sessionsv1alpha1.SessionArchived || s.Status.SessionID == "" {
		return time.Time{}, false
	}
	c := meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionArchived)
	if c == nil || c.Status != metav1.ConditionTrue {
		return time.Time{}, false
	}
	if s.Annotations[sessionsv1alpha1.RestoreAnnotation] == s.Status.SessionID && c.Reason != sessionsv1alpha1.ReasonRestoreFailed {
		return time.Time{}, false
	}
	return c.LastTransitionTime.Time, true
}

// Why a session is retired.
const (
	// RetiredByAge: archived longer than retention.archivedSessionsSeconds.
	RetiredByAge = "age"
	// RetiredByCount: one of the longest archived beyond retention.maxArchivedSessions.
	RetiredByCount = "count"
)

// Retirement is one archived session past the rule, and why, in words for its Event.
type Retirement struct {
	Name    string
	Reason  string
	Message string
}

// RetiredSessions judges a namespace's archived sessions at now: those archived longer than
// r.KeepFor, then, of the rest, the longest archived beyond r.MaxArchived, oldest first.
// next is how long until the next one of the rest comes of age (0: none will).
func RetiredSessions(archived []ArchivedSession, r Retention, now time.Time) (retire []Retirement, next time.Duration) {
	sorted := slices.Clone(archived)
	slices.SortFunc(sorted, func(a, b ArchivedSession) int {
		return cmp.Or(a.ArchivedAt.Compare(b.ArchivedAt), strings.Compare(a.Name, b.Name))
	})
	kept := make([]ArchivedSession, 0, len(sorted))
	for _, s := range sorted {
		if age := now.Sub(s.ArchivedAt); age >= r.KeepFor {
			retire = append(retire, Retirement{Name: s.Name, Reason: RetiredByAge, Message: fmt.Sprintf(
				"archived %s ago, past the SessionPolicy's retention.archivedSessionsSeconds (%s)", age.Round(time.Second), r.KeepFor)})
			continue
		}
		kept = append(kept, s)
	}
	over := len(kept) - r.MaxArchived
	for i := 0; i < over; i++ {
		retire = append(retire, Retirement{Name: kept[i].Name, Reason: RetiredByCount, Message: fmt.Sprintf(
			"one of the %d longest archived of %d archived sessions, over the SessionPolicy's retention.maxArchivedSessions (%d)",
			over, len(kept), r.MaxArchived)})
	}
	if over > 0 {
		kept = kept[over:]
	}
	if len(kept) > 0 {
		next = kept[0].ArchivedAt.Add(r.KeepFor).Sub(now)
	}
	return retire, next
}
