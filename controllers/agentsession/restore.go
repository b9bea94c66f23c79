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
	"errors"
	"fmt"
	"k8s.io/klog/v2"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// restoreAsked says the session's restore annotation (the sessions tool's restore) asks for
// a restore now: the session is Archived, the annotation names its current sessionId, and
// no archive-at is due (a later archive sets one, and outweighs a restore left behind).
func restoreAsked(s *sessionsv1alpha1.AgentSession, now time.Time) bool {
	if s.Status.Phase != sessionsv1alpha1.SessionArchived || s.Status.SessionID == "" || s.Annotations[sessionsv1alpha1.RestoreAnnotation] != s.Status.SessionID {
		return false
	}
	due, _ := archiveDue(s, now)
	return !due
}

// restoreWhenAsked makes the archived transcript live again and the session Active when
// restoreAsked says so; the Ready condition then follows as for any live transcript. A
// transcript the store no longer has (removed after its archived-transcript retention)
// leaves the session Archived with the reason RestoreFailed, which the sessions tool reports.
func (r *AgentSessionReconciler) restoreWhenAsked(ctx context.Context, s *sessionsv1alpha1.AgentSession) error {
	if !restoreAsked(s, r.now()) {
		return nil
	}
	err := r.Store.Restore(ctx, s.Namespace, s.Status.SessionID)
	if errors.Is(err, transcript.ErrNotFound) {
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: sessionsv1alpha1.ConditionArchived, Status: metav1.ConditionTrue,
			Reason:  sessionsv1alpha1.ReasonRestoreFailed,
			Message: fmt.Sprintf("cannot restore: the archived transcript of sessionId %s is no longer kept (removed after the transcript-store's --archived-transcript-retention)", s.Status.SessionID)})
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore transcript: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("restoring archived session as its restore annotation asks", "agentSession", klog.KObj(s))
	s.Status.Phase = sessionsv1alpha1.SessionActive
	meta.RemoveStatusCondition(&s.Status.Conditions, sessionsv1alpha1.ConditionArchived)
	return nil
}

// archivedReason is the reason of the session's Archived condition; "" without one.
func archivedReason(s *sessionsv1alpha1.AgentSession) string {
	if c := meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionArchived); c != nil {
		return c.Reason
	}
	return ""
}
