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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// TestSessionPolicyReconcileWritesStatusOnce: a reconcile that has both a new Ready
// condition and new window spend to record writes the SessionPolicy's status once.
func TestSessionPolicyReconcileWritesStatusOnce(t *testing.T) {
	p := &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "default", Generation: 1},
		Spec: sessionsv1alpha1.SessionPolicySpec{Budgets: &sessionsv1alpha1.Budgets{Namespace: &sessionsv1alpha1.NamespaceBudget{
			Window: metav1.Duration{Duration: time.Hour}, MaxTokens: ptr.To[int64](1000)}}}}
	writes := 0
	count := func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		writes++
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}
	countPatch := func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
		writes++
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(p).WithStatusSubresource(&sessionsv1alpha1.SessionPolicy{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: count, SubResourcePatch: countPatch}).Build()
	ctx := context.Background()
	ledger := budget.NewLedger(c, clocktesting.NewFakeClock(time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC)))
	ledger.Charge(ctx, budget.Call{Namespace: "team", Turn: "u9/compact-1", Purpose: budget.PurposeCompaction}, usage.Turn{Input: 40, Output: 2})
	r := &SessionPolicyReconciler{Client: c, APIReader: c, Spend: NewSpendWriter(ledger)}

	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	if writes != 1 {
		t.Errorf("the reconcile wrote the status %d times, want once", writes)
	}
	got := &sessionsv1alpha1.SessionPolicy{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, sessionsv1alpha1.ConditionReady) || got.Status.Spend == nil || got.Status.Spend.Tokens != 42 {
		t.Errorf("status %+v: want Ready and the window's 42 tokens", got.Status)
	}
}
