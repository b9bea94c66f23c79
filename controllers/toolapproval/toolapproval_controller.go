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

package toolapproval

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/announce"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// ToolApprovalReconciler writes a ToolApproval's status, its one writer: Pending until a
// person's spec.decision lands (Approved or Denied, decidedBy from the annotation the
// webhook stamped from the admission request), or Expired at spec.expiresAt or when its
// owner is cancelled, finished or gone. The owner's controller watches the approval and
// resumes its turn once it is decided.
type ToolApprovalReconciler struct {
	client.Client
	Clock    clock.Clock
	Recorder recorder.EventRecorder
	// announcer delivers approval.requested to the session's channel sink; nil sends none.
	Announcer *announce.Announcer
}

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=toolapprovals,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=toolapprovals/status,verbs=get;update;patch

// Reconcile implements reconcile.Reconciler.
func (r *ToolApprovalReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ta := &sessionsv1alpha1.ToolApproval{}
	if err := r.Get(ctx, req.NamespacedName, ta); err != nil || ta.Status.Decided() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := ta.DeepCopy()
	now := metav1.NewTime(r.Clock.Now())
	st := &ta.Status
	var res ctrl.Result
	switch ended, err := r.ownerEnded(ctx, ta); {
	case err != nil:
		return ctrl.Result{}, err
	case ta.Spec.Decision != "":
		st.Phase, st.DecidedBy = sessionsv1alpha1.ApprovalPhase(ta.Spec.Decision), ta.Annotations[sessionsv1alpha1.DecidedByAnnotation]
	case ended != "":
		st.Phase = sessionsv1alpha1.ApprovalExpired
		r.decided(ta, now, "OwnerEnded", "expired: "+ended)
	case !now.Before(&ta.Spec.ExpiresAt):
		st.Phase = sessionsv1alpha1.ApprovalExpired
		r.decided(ta, now, "Timeout", "expired: no decision by "+ta.Spec.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"))
	default:
		if st.Phase == sessionsv1alpha1.ApprovalPending {
			return ctrl.Result{RequeueAfter: ta.Spec.ExpiresAt.Sub(now.Time)}, nil
		}
		st.Phase = sessionsv1alpha1.ApprovalPending
		res.RequeueAfter = ta.Spec.ExpiresAt.Sub(now.Time)
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: sessionsv1alpha1.ConditionDecided, Status: metav1.ConditionFalse,
			Reason: "Pending", Message: "waiting for a person with the verb approve", ObservedGeneration: ta.Generation})
	}
	if st.Phase == sessionsv1alpha1.ApprovalApproved || st.Phase == sessionsv1alpha1.ApprovalDenied {
		msg := string(st.Phase) + " by " + st.DecidedBy
		if ta.Spec.Reason != "" {
			msg += ": " + ta.Spec.Reason
		}
		r.decided(ta, now, string(st.Phase), msg)
	}
	st.ObservedGeneration = ta.Generation
	written, err := ownerflow.WriteStatus(ctx, r.Client, base, ta)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !written {
		return res, nil
	}
	if st.Decided() {
		approvalDecided(ta)
		if r.Recorder != nil {
			r.Recorder.Eventf(ta, nil, corev1.EventTypeNormal, string(st.Phase), "Decide", "%s", meta.FindStatusCondition(st.Conditions, sessionsv1alpha1.ConditionDecided).Message)
		}
	} else {
		approvalRequested(ta.Namespace)
		r.notifyApproval(ctx, ta)
	}
	return res, nil
}

// decided stamps the time and the Decided condition.
func (r *ToolApprovalReconciler) decided(ta *sessionsv1alpha1.ToolApproval, now metav1.Time, reason, msg string) {
	ta.Status.DecidedAt = &now
	meta.SetStatusCondition(&ta.Status.Conditions, metav1.Condition{Type: sessionsv1alpha1.ConditionDecided, Status: metav1.ConditionTrue,
		Reason: reason, Message: textutil.Truncate(msg, ownerflow.MaxConditionMessage), ObservedGeneration: ta.Generation})
}

// ownerEnded says why the approval's owner no longer waits for it ("" while it does): it is
// gone (deleted, or finished: the cache keeps no finished send), being deleted, or cancelled.
func (r *ToolApprovalReconciler) ownerEnded(ctx context.Context, ta *sessionsv1alpha1.ToolApproval) (string, error) {
	var owner ownerflow.TurnOwner
	switch ta.Spec.Owner.Kind {
	case turns.OwnerSessionSend:
		owner = &sessionsv1alpha1.SessionSend{}
	case turns.OwnerSubagentRun:
		owner = &sessionsv1alpha1.SubagentRun{}
	default:
		return "unknown owner kind " + ta.Spec.Owner.Kind, nil
	}
	err := r.Get(ctx, types.NamespacedName{Namespace: ta.Namespace, Name: ta.Spec.Owner.Name}, owner)
	kind := strings.ToLower(ta.Spec.Owner.Kind)
	switch {
	case apierrors.IsNotFound(err):
		return "the " + kind + " is gone", nil
	case err != nil:
		return "", err
	case !owner.GetDeletionTimestamp().IsZero():
		return "the " + kind + " is being deleted", nil
	case owner.GetOwnerStatus().Finished():
		return "the " + kind + " finished", nil
	case cancelRequested(owner):
		return "the " + kind + " was cancelled", nil
	}
	return "", nil
}

func cancelRequested(o ownerflow.TurnOwner) bool {
	switch o := o.(type) {
	case *sessionsv1alpha1.SessionSend:
		return o.Spec.Cancel
	case *sessionsv1alpha1.SubagentRun:
		return o.Spec.Cancel
	}
	return false
}

// SetupWith registers the reconciler, woken also by the owners' changes, and points the
// overdue gauge at its cache.
func (r *ToolApprovalReconciler) SetupWith(b *builder.Builder) error {
	approvalsOverdue.watch(r.Client, r.Clock)
	return b.
		For(&sessionsv1alpha1.ToolApproval{}).
		Watches(&sessionsv1alpha1.SessionSend{}, r.byOwner(turns.OwnerSessionSend)).
		Watches(&sessionsv1alpha1.SubagentRun{}, r.byOwner(turns.OwnerSubagentRun)).
		Named("toolapproval").Complete(ownerflow.RequeueConflicts(r))
}

// byOwner maps an owner's change to its approvals.
func (r *ToolApprovalReconciler) byOwner(kind string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		var list sessionsv1alpha1.ToolApprovalList
		if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace()),
			client.MatchingFields{cacheindex.ApprovalOwner: cacheindex.ApprovalOwnerKey(kind, o.GetName())}); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			if !list.Items[i].Status.Decided() {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return reqs
	})
}
