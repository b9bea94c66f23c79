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
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// Bounds of a retention pass.
const (
	// maxRetiredPerPass bounds the sessions one reconcile retires: one batch of records (one
	// request and one fsync in the transcript store) and as many deletes. The rest are
	// retired by the next pass, requeued at once.
	maxRetiredPerPass = transcript.MaxRetiredBatch
	// deletesInFlight is how many of a pass's deletes wait on the API server at once. Each
	// is one etcd transaction and a watch event to every AgentSession watcher: eight keep a
	// pass's 500 deletes to about 60 round trips while leaving the API server's mutating
	// requests (--max-mutating-requests-inflight, 200 by default) and the manager's client
	// rate (--kube-api-qps) to the sessions' own writes. Measured on the loaded 2-core
	// machine with the finalizer sessions then had (docs/operations/scaling.md): 32 cut a
	// pass from 12 s to 4.5 s, yet the sessions went only 10-20% sooner, the finalizers'
	// patches queuing behind.
	deletesInFlight = 8
	// namesInEvent is how many retired sessions the pass's SessionsRetired Event names.
	namesInEvent = 5
	// requeueNow is the smallest RequeueAfter: the next pass at once, without the rate
	// limiter's backoff a bare Requeue brings.
	requeueNow = time.Nanosecond
)

// RetentionReconciler applies a namespace's retention rule (spec.retention of its
// SessionPolicy, the defaults without one) to its archived sessions: the sessions past the
// rule (policy.RetiredSessions) have their compact records written to the transcript store
// in one batch, durably, and only then are their objects deleted, a few at a time (one write
// each: the transcript is archived already, and no finalizer holds the object). One
// SessionsRetired Event on the SessionPolicy says how many a pass retired and names the
// first few; a session's own Event would go with its object. A manager that dies between
// the two leaves records and objects: the next pass writes the same records again and
// deletes. The next deadline is a RequeueAfter on the injected clock.
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
		retire, res.RequeueAfter = retire[:maxRetiredPerPass], requeueNow
	}
	written, err := r.writeRecords(ctx, byName, retire, now)
	gone, delErr := r.deleteAll(ctx, written)
	if len(gone) > 0 {
		ctrl.LoggerFrom(ctx).Info("retired archived sessions", "namespace", req.Namespace, "count", len(gone), "first", firstNames(gone))
		if pol != nil {
			r.Recorder.Eventf(pol, nil, corev1.EventTypeNormal, sessionsv1alpha1.EventSessionsRetired, "Retire",
				"%d archived sessions retired: their objects are deleted, their records and transcripts kept in the transcript store until its archived-transcript retention (sessions_list archived lists them, restore brings one back): %s",
				len(gone), firstNames(gone))
		}
	}
	return res, errors.Join(err, delErr)
}

// archivedAt is when s was archived, for a session the retention may retire: its
// transcript archived for good (policy.TranscriptArchived) and the object not going.
func archivedAt(s *sessionsv1alpha1.AgentSession) (time.Time, bool) {
	if !s.DeletionTimestamp.IsZero() {
		return time.Time{}, false
	}
	return policy.TranscriptArchived(s)
}

// writeRecords writes the records of the sessions retire names in one batch and returns
// the sessions whose records are kept, copies of the objects judged. A record that cannot
// be written keeps its session, with a RetireFailed Event on it: every one of a batch the
// store refused, the first one past a bound of the store (the others wait for room).
func (r *RetentionReconciler) writeRecords(ctx context.Context, byName map[string]*sessionsv1alpha1.AgentSession,
	retire []policy.Retirement, now time.Time) ([]*sessionsv1alpha1.AgentSession, error) {
	sessions := make([]*sessionsv1alpha1.AgentSession, 0, len(retire))
	recs := make([]transcript.RetiredSession, 0, len(retire))
	var errs []error
	for _, ret := range retire {
		s := byName[ret.Name].DeepCopy()
		rec := RecordOf(s, ret.Reason, now)
		if err := rec.Validate(); err != nil {
			errs = append(errs, r.retireFailed(s, err))
			continue
		}
		ctrl.LoggerFrom(ctx).V(2).Info("retiring archived session", "agentSession", klog.KObj(s), "reason", ret.Message)
		sessions, recs = append(sessions, s), append(recs, rec)
	}
	if len(recs) == 0 {
		return nil, errors.Join(errs...)
	}
	n, err := r.Records.Retire(ctx, recs...)
	switch {
	case err == nil:
	case errors.Is(err, transcript.ErrFull) && n < len(sessions):
		errs = append(errs, r.retireFailed(sessions[n], err))
	default:
		for _, s := range sessions[n:] {
			errs = append(errs, r.retireFailed(s, err))
		}
	}
	return sessions[:n], errors.Join(errs...)
}

// retireFailed says on s that it is kept, and why, and returns the error.
func (r *RetentionReconciler) retireFailed(s *sessionsv1alpha1.AgentSession, err error) error {
	r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, sessionsv1alpha1.EventRetireFailed, "Retire",
		"kept: its record could not be written to the transcript store: %v", err)
	return fmt.Errorf("retire %s: %w", s.Name, err)
}

// deleteAll deletes the sessions, deletesInFlight at a time, each while it is the object
// that was judged (a restore since changes it: its delete is refused and the session
// stays), and returns the names of those deleted.
func (r *RetentionReconciler) deleteAll(ctx context.Context, sessions []*sessionsv1alpha1.AgentSession) ([]string, error) {
	deleted := make([]bool, len(sessions))
	errs := make([]error, len(sessions))
	sem := make(chan struct{}, deletesInFlight)
	var wg sync.WaitGroup
	for i, s := range sessions {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := r.Delete(ctx, s, client.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion})
			switch {
			case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			case err != nil:
				errs[i] = fmt.Errorf("delete %s: %w", s.Name, err)
			default:
				deleted[i] = true
			}
		})
	}
	wg.Wait()
	var gone []string
	for i, s := range sessions {
		if deleted[i] {
			gone = append(gone, s.Name)
		}
	}
	return gone, errors.Join(errs...)
}

// firstNames names the first namesInEvent of names, and how many more.
func firstNames(names []string) string {
	if len(names) <= namesInEvent {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:namesInEvent], ", "), len(names)-namesInEvent)
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
