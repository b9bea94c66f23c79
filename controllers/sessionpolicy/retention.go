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

package sessionpolicy

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// maxRetiredPerPass bounds the sessions one reconcile retires (a record write and a delete
// each); the rest are retired by the next pass, at once.
const maxRetiredPerPass = 100

// RetentionReconciler applies a namespace's retention rule (spec.retention of its
// SessionPolicy, the defaults without one) to its archived sessions: for each one past the
// rule (policy.RetiredSessions) it writes the session's compact record to the transcript
// store, durably, says so in a Retired Event on the session, and only then deletes the
// object (one write: its transcript is archived already, and no finalizer holds it). A manager
// that dies between the two leaves a record and an object: the next pass writes the same
// record again and deletes. The next deadline is a RequeueAfter on the injected clock.
type RetentionReconciler struct {
	client.Client
	// Records keeps the records; the transcript store's client in the manager.
	Records  transcript.Retirer
	Clock    clock.PassiveClock
	Recorder recorder.EventRecorder
}

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=agentsessions,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create

// Reconcile judges the archived sessions of req's namespace (req names its policy,
// lookup.PolicyName, whether or not it exists).
func (r *RetentionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pol := &sessionsv1alpha1.SessionPolicy{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: lookup.PolicyName}, pol); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		pol = nil
	}
	var all sessionsv1alpha1.AgentSessionList
	if err := r.List(ctx, &all, client.InNamespace(req.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	byName := map[string]*sessionsv1alpha1.AgentSession{}
	var archived []policy.ArchivedSession
	for i := range all.Items {
		s := &all.Items[i]
		if at, ok := archivedAt(s); ok {
			byName[s.Name] = s
			archived = append(archived, policy.ArchivedSession{Name: s.Name, ArchivedAt: at})
		}
	}
	now := r.Clock.Now()
	retire, next := policy.RetiredSessions(archived, policy.RetentionOf(pol), now)
	res := ctrl.Result{RequeueAfter: next}
	if len(retire) > maxRetiredPerPass {
		retire, res.RequeueAfter = retire[:maxRetiredPerPass], time.Second
	}
	done := 0
	var errs []error
	for _, ret := range retire {
		ok, err := r.retire(ctx, byName[ret.Name].DeepCopy(), ret, now)
		if err != nil {
			errs = append(errs, err)
			if errors.Is(err, transcript.ErrFull) {
				break // the store takes no more: the objects stay, retried on the next pass
			}
			continue
		}
		if ok {
			done++
		}
	}
	if done > 0 && pol != nil {
		r.Recorder.Eventf(pol, nil, corev1.EventTypeNormal, sessionsv1alpha1.EventSessionsRetired, "Retire",
			"%d archived sessions retired: their objects are deleted, their records and transcripts kept in the transcript store until its archived-transcript retention", done)
	}
	return res, errors.Join(errs...)
}

// archivedAt is when s was archived, for a session the retention may retire: archived,
// with a transcript, not going, and no restore of it asked and pending.
func archivedAt(s *sessionsv1alpha1.AgentSession) (time.Time, bool) {
	if s.Status.Phase != sessionsv1alpha1.SessionArchived || s.Status.SessionID == "" || !s.DeletionTimestamp.IsZero() {
		return time.Time{}, false
	}
	c := meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionArchived)
	if c == nil || c.Status != "True" {
		return time.Time{}, false
	}
	if s.Annotations[sessionsv1alpha1.RestoreAnnotation] == s.Status.SessionID && c.Reason != sessionsv1alpha1.ReasonRestoreFailed {
		return time.Time{}, false
	}
	return c.LastTransitionTime.Time, true
}

// retire writes s's record, says so, and deletes s while it is the object that was judged
// (a restore since changes it: the delete is refused and the session stays). ok is false
// when the object had changed or gone.
func (r *RetentionReconciler) retire(ctx context.Context, s *sessionsv1alpha1.AgentSession, ret policy.Retirement, now time.Time) (bool, error) {
	rec := RecordOf(s, ret.Reason, now)
	if err := r.Records.Retire(ctx, rec); err != nil {
		r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, sessionsv1alpha1.EventRetireFailed, "Retire",
			"kept: its record could not be written to the transcript store: %v", err)
		return false, fmt.Errorf("retire %s: %w", s.Name, err)
	}
	r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, sessionsv1alpha1.EventRetired, "Delete",
		"%s: the object is deleted; its record and transcript %s stay in the transcript store until its archived-transcript retention (sessions_list archived lists it, restore brings it back)",
		ret.Message, s.Status.SessionID)
	ctrl.LoggerFrom(ctx).V(2).Info("retiring archived session", "agentSession", klog.KObj(s), "reason", ret.Reason)
	err := r.Delete(ctx, s, client.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil
	}
	return err == nil, err
}

// RecordOf is the compact record of archived session s, retired at now for reason.
func RecordOf(s *sessionsv1alpha1.AgentSession, reason string, now time.Time) transcript.RetiredSession {
	rec := transcript.RetiredSession{
		Namespace: s.Namespace, Name: s.Name, SessionID: s.Status.SessionID, Key: s.Spec.Key, AgentID: s.Spec.AgentID,
		Kind: string(s.Status.Kind), Channel: s.Status.Channel, ChatType: string(s.Spec.ChatType),
		DisplayName: s.Spec.DisplayName, Label: s.Spec.Label, SpawnedBy: s.Spec.SpawnedBy, ParentSessionKey: s.Spec.ParentSessionKey,
		Sandboxed: s.Spec.Sandboxed, MessageCount: s.Status.MessageCount, InputTokens: s.Status.InputTokens,
		OutputTokens: s.Status.OutputTokens, TotalTokens: s.Status.TotalTokens,
		TranscriptPath: s.Status.TranscriptPath, CreatedAt: s.CreationTimestamp.UTC(), RetiredAt: now.UTC(), Reason: reason,
	}
	if s.Status.UpdatedAt != nil {
		rec.UpdatedAt = s.Status.UpdatedAt.UTC()
	}
	if at, ok := archivedAt(s); ok {
		rec.ArchivedAt = at.UTC()
	}
	return rec
}

// SetupWith registers the reconciler: a namespace's pass runs when its policy changes and
// when one of its sessions is archived, restored or goes, and at the next deadline.
func (r *RetentionReconciler) SetupWith(b *builder.Builder) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	toPolicy := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: lookup.PolicyName}}}
	})
	isArchived := predicate.NewPredicateFuncs(func(o client.Object) bool {
		s, ok := o.(*sessionsv1alpha1.AgentSession)
		return ok && s.Status.Phase == sessionsv1alpha1.SessionArchived
	})
	return b.For(&sessionsv1alpha1.SessionPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&sessionsv1alpha1.AgentSession{}, toPolicy, builder.WithPredicates(isArchived)).
		Named("sessionretention").Complete(ownerflow.RequeueConflicts(r))
}
