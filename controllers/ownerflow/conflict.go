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

package ownerflow

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// conflictRequeue is how soon a reconcile whose write met a newer object runs again: by
// then the cache has mostly caught up (the newer object's own event queues it too).
const conflictRequeue = NotReadyRequeue

// RequeueConflicts wraps a reconciler so that an optimistic-lock conflict (a write computed
// from a cache read older than the object) is a requeue, not an error: it is the normal
// course of a controller reading a cache, and controller-runtime logs every error as
// "Reconciler error" with a stack trace, which a person reads as a crash.
func RequeueConflicts(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if err != nil && apierrors.IsConflict(err) {
			ctrl.LoggerFrom(ctx).V(3).Info("write refused as stale; requeued", "error", err.Error())
			return ctrl.Result{RequeueAfter: conflictRequeue}, nil
		}
		return res, err
	})
}
