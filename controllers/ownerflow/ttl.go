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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TTLLeft is how long a finished object has to live: its ttlSecondsAfterFinished (else the
// operator default; 0 there keeps it) from when it finished, and never before notBefore (a
// kept child's archive). keep is true when the object is never deleted.
func TTLLeft(spec *int32, def time.Duration, finishedAt, notBefore *metav1.Time, now time.Time) (left time.Duration, keep bool) {
	ttl := def
	if spec != nil {
		ttl = time.Duration(*spec) * time.Second
	} else if def <= 0 {
		return 0, true
	}
	if finishedAt == nil {
		return 0, true
	}
	end := finishedAt.Add(ttl)
	if notBefore != nil && notBefore.After(end) {
		end = notBefore.Time
	}
	return max(end.Sub(now), 0), false
}

// DeleteAfterTTL deletes a finished object once its TTL has passed and asks to be woken then
// otherwise. Dependents are orphaned: a run's kept (archived) child session stays.
func DeleteAfterTTL(ctx context.Context, c client.Client, clk clock.Clock, obj client.Object, spec *int32, def time.Duration,
	finishedAt, notBefore *metav1.Time) (ctrl.Result, error) {
	left, keep := TTLLeft(spec, def, finishedAt, notBefore, clk.Now())
	switch {
	case keep:
		return ctrl.Result{}, nil
	case left > 0:
		return ctrl.Result{RequeueAfter: left}, nil
	}
	uid := obj.GetUID()
	err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationOrphan))
	if client.IgnoreNotFound(err) == nil {
		ctrl.LoggerFrom(ctx).V(2).Info("deleted after its TTL")
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}
