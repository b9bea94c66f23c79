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

package sessionschedule

import (
	"context"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// history runs when a send of the schedule finished since the last reconcile (it left
// status.active, and the cache): it reads the finished sends from the API server, sets
// status.lastSuccessfulTime, and deletes the oldest beyond successfulSendsHistoryLimit
// and failedSendsHistoryLimit, as CronJob's history limits do. A schedule that nothing
// finished for costs no API read.
func (r *SessionScheduleReconciler) history(ctx context.Context, f *scheduleFlow) error {
	s := f.sched
	ended := false
	for _, ref := range s.Status.Active {
		if !slices.ContainsFunc(f.active, func(a sessionsv1alpha1.SessionSend) bool { return a.UID == ref.UID }) {
			ended = true
			break
		}
	}
	if !ended {
		return nil
	}
	var list sessionsv1alpha1.SessionSendList
	if err := r.APIReader.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{sessionsv1alpha1.ScheduleLabel: s.Name}); err != nil {
		return err
	}
	var ok, failed []*sessionsv1alpha1.SessionSend
	for i := range list.Items {
		send := &list.Items[i]
		if !metav1.IsControlledBy(send, s) || !send.Status.Finished() || !send.DeletionTimestamp.IsZero() {
			continue
		}
		if send.Status.Phase == sessionsv1alpha1.SendCompleted {
			ok = append(ok, send)
			if t := send.Status.CompletedAt; t != nil && (s.Status.LastSuccessfulTime == nil || s.Status.LastSuccessfulTime.Before(t)) {
				s.Status.LastSuccessfulTime = t.DeepCopy()
			}
		} else {
			failed = append(failed, send)
		}
	}
	keepOK, keepFailed := int32(sessionsv1alpha1.DefaultSuccessfulSendsHistoryLimit), int32(sessionsv1alpha1.DefaultFailedSendsHistoryLimit)
	if l := s.Spec.SuccessfulSendsHistoryLimit; l != nil {
		keepOK = *l
	}
	if l := s.Spec.FailedSendsHistoryLimit; l != nil {
		keepFailed = *l
	}
	return r.trim(ctx, ok, int(keepOK), failed, int(keepFailed))
}

// trim deletes the oldest sends of each list beyond its limit (names sort by tick: they
// end in the tick's unix minutes, all of one width for centuries).
func (r *SessionScheduleReconciler) trim(ctx context.Context, ok []*sessionsv1alpha1.SessionSend, keepOK int, failed []*sessionsv1alpha1.SessionSend, keepFailed int) error {
	for _, l := range []struct {
		sends []*sessionsv1alpha1.SessionSend
		keep  int
	}{{ok, keepOK}, {failed, keepFailed}} {
		slices.SortFunc(l.sends, func(a, b *sessionsv1alpha1.SessionSend) int { return strings.Compare(a.Name, b.Name) })
		for i := 0; i < len(l.sends)-l.keep; i++ {
			if err := r.Delete(ctx, l.sends[i], client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}
