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

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// adoptAsked is the retired sessionId a new session's restore-from annotation names; ""
// when it names none or the session already has a transcript.
func adoptAsked(s *sessionsv1alpha1.AgentSession) string {
	if s.Status.SessionID != "" || s.Status.Phase != "" {
		return ""
	}
	return s.Annotations[sessionsv1alpha1.RestoreFromAnnotation]
}

// adoptWhenAsked brings a retired session back in a new object (the sessions tool's restore
// of a session the SessionPolicy's retention deleted): the store's record of the sessionId
// the restore-from annotation names must name this object's name, key and agent; its
// archived transcript is then made live again and becomes this session's, with its
// counters. A record's spawnedBy and parentSessionKey are written first (the manager's own
// write: only it may set them), and the rest follows in the reconcile that write wakes.
// No record, another session's, or a transcript the store no longer has leaves the
// session Archived with the reason RestoreFailed and no transcript. requeue says the spec
// was written and this reconcile must stop.
func (r *AgentSessionReconciler) adoptWhenAsked(ctx context.Context, s *sessionsv1alpha1.AgentSession) (adopted, requeue bool, err error) {
	sid := adoptAsked(s)
	if sid == "" {
		return false, false, nil
	}
	rec, found, err := r.retiredRecord(ctx, s.Namespace, sid)
	if err != nil {
		return false, false, err
	}
	if !found || rec.Name != s.Name || rec.Key != s.Spec.Key || rec.AgentID != s.Spec.AgentID {
		r.adoptFailed(s, fmt.Sprintf("cannot restore: the transcript store keeps no record of a retired session %s named %s with key %s", sid, s.Name, s.Spec.Key))
		return false, false, nil
	}
	if s.Spec.SpawnedBy != rec.SpawnedBy || s.Spec.ParentSessionKey != rec.ParentSessionKey {
		base := s.DeepCopy()
		s.Spec.SpawnedBy, s.Spec.ParentSessionKey = rec.SpawnedBy, rec.ParentSessionKey
		return false, true, r.Patch(ctx, s, client.MergeFrom(base))
	}
	err = r.Store.Restore(ctx, s.Namespace, sid)
	if errors.Is(err, transcript.ErrNotFound) {
		r.adoptFailed(s, fmt.Sprintf("cannot restore: the archived transcript of sessionId %s is no longer kept (removed after the transcript-store's --archived-transcript-retention)", sid))
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("restore retired transcript: %w", err)
	}
	stats, err := r.Store.Stats(ctx, s.Namespace, sid)
	if err != nil {
		return false, false, fmt.Errorf("stats of restored transcript: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("restoring retired session from its record", "agentSession", klog.KObj(s), "sessionId", sid)
	s.Status.SessionID, s.Status.TranscriptPath, s.Status.Phase = sid, stats.Path, sessionsv1alpha1.SessionActive
	s.Status.MessageCount, s.Status.InputTokens, s.Status.OutputTokens, s.Status.TotalTokens = stats.MessageCount, stats.InputTokens, stats.OutputTokens, stats.TotalTokens
	s.Status.LastMessagePreview, s.Status.Compactions = stats.LastPreview, stats.Compactions
	s.Status.UpdatedAt = &metav1.Time{Time: stats.UpdatedAt}
	return true, false, nil
}

// retiredRecord is the store's record of namespace's retired sessionId.
func (r *AgentSessionReconciler) retiredRecord(ctx context.Context, namespace, sid string) (transcript.RetiredSession, bool, error) {
	if r.Retired == nil {
		return transcript.RetiredSession{}, false, nil
	}
	recs, err := r.Retired.RetiredSessions(ctx, namespace, transcript.RetiredQuery{Ref: sid})
	if err != nil {
		return transcript.RetiredSession{}, false, fmt.Errorf("retired records: %w", err)
	}
	for _, rec := range recs {
		if rec.SessionID == sid {
			return rec, true, nil
		}
	}
	return transcript.RetiredSession{}, false, nil
}

// adoptFailed leaves a session whose restore-from cannot be honoured Archived, with no
// transcript and the reason RestoreFailed.
func (r *AgentSessionReconciler) adoptFailed(s *sessionsv1alpha1.AgentSession, msg string) {
	s.Status.Phase = sessionsv1alpha1.SessionArchived
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: sessionsv1alpha1.ConditionArchived, Status: metav1.ConditionTrue,
		Reason: sessionsv1alpha1.ReasonRestoreFailed, Message: msg,
		LastTransitionTime: metav1.NewTime(r.now())})
}

// unretire drops the store's record of a session that is live again (adopted, or restored
// in its kept object after a retire whose delete it outran); a failure only leaves a
// record that sessions_list passes over while the session lives.
func (r *AgentSessionReconciler) unretire(ctx context.Context, s *sessionsv1alpha1.AgentSession) {
	if r.Retired == nil {
		return
	}
	if err := r.Retired.Unretire(ctx, s.Namespace, s.Status.SessionID); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "dropping the retired record of a restored session", "agentSession", klog.KObj(s))
	}
}
