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
	"fmt"
	"k8s.io/klog/v2"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/secretaccess"
)

// SessionPolicyReconciler reports whether a SessionPolicy is in force (its globs compile and
// its delivery Secrets are usable, internal/secretaccess) and records the namespace's
// budget window spend from the ledger, in one status write.
type SessionPolicyReconciler struct {
	client.Client
	APIReader client.Reader
	// spend records the namespace's budget window spend in status.spend (nil: never).
	Spend *SpendWriter
}

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionpolicies/status,verbs=get;update;patch

func (r *SessionPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &sessionsv1alpha1.SessionPolicy{}
	if err := r.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := p.DeepCopy()
	ctrl.LoggerFrom(ctx).V(2).Info("checking session policy", "sessionPolicy", klog.KObj(p), "rules", len(p.Spec.SendPolicy.Rules),
		"sinks", len(p.Spec.Delivery))
	cond := metav1.Condition{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "InForce",
		Message: "the policy is in force", ObservedGeneration: p.Generation}
	var res ctrl.Result
	for _, d := range p.Spec.Delivery {
		if d.SecretRef == nil {
			continue
		}
		// The Secret rule of the announce step: a Secret neither vouched for nor opted in is
		// not read, and the condition says the same of it whether it exists or not.
		_, err := secretaccess.Get(ctx, r.APIReader, p, d.SecretRef.Name)
		switch {
		case secretaccess.IsUnusable(err):
			cond.Status, cond.Reason = metav1.ConditionFalse, "SecretNotUsable"
			cond.Message = fmt.Sprintf("delivery sink for %s: %s", d.Channel, err.Error())
		case apierrors.IsNotFound(err):
			cond.Status, cond.Reason = metav1.ConditionFalse, "SecretNotFound"
			cond.Message = fmt.Sprintf("delivery sink for %s: Secret %q not found", d.Channel, d.SecretRef.Name)
		case err != nil:
			return ctrl.Result{}, err
		}
		if cond.Status == metav1.ConditionFalse {
			res.RequeueAfter = ownerflow.SecretRecheck
			break
		}
	}
	// One status write: the Ready condition and the budget window's spend together.
	ownerflow.ApplyReady(ctx, p, &p.Status.Conditions, &p.Status.ObservedGeneration, cond)
	again, spent := r.Spend.apply(p)
	if again > 0 && (res.RequeueAfter == 0 || again < res.RequeueAfter) {
		res.RequeueAfter = again
	}
	_, err := ownerflow.WriteStatus(ctx, r.Client, base, p)
	if spent {
		r.Spend.recorded(p.Namespace, err)
	}
	return res, err
}

// SetupWith registers the reconciler. The budget ledger wakes it when a namespace's spend
// changes.
func (r *SessionPolicyReconciler) SetupWith(b *builder.Builder) error {
	b = b.For(&sessionsv1alpha1.SessionPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	if r.Spend != nil {
		b = b.WatchesRawSource(source.Channel(r.Spend.ledger.Wakes(), &handler.EnqueueRequestForObject{}))
	}
	return b.Named("sessionpolicy").Complete(ownerflow.RequeueConflicts(r))
}
