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

package sessionhook

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// storeTally is the store's side: the deliveries it reports, and what the controller
// acknowledged.
type storeTally struct {
	pending transcript.HookDelivery
	acked   []int64
}

func (s *storeTally) HookDeliveries(_ context.Context, ns, name string) (transcript.HookDelivery, error) {
	d := s.pending
	d.Namespace, d.Name = ns, name
	return d, nil
}

func (s *storeTally) AckHookDeliveries(_ context.Context, d transcript.HookDelivery) error {
	s.acked = append(s.acked, d.Count)
	s.pending.Count -= d.Count
	return nil
}

// The SessionHook controller is the one writer of the hook's status: it adds the deliveries
// the store reports, writes them with the rest, then acknowledges them, so they are not
// counted twice.
func TestDeliveriesWrittenThenAcknowledged(t *testing.T) {
	at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(at.Add(-time.Hour))
	h := &sessionsv1alpha1.SessionHook{ObjectMeta: metav1.ObjectMeta{Name: "ci", Namespace: "ns", UID: "h1"},
		Spec:   sessionsv1alpha1.SessionHookSpec{AgentID: "bot", SigningSecretRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "signing"}, Key: "secret"}},
		Status: sessionsv1alpha1.SessionHookStatus{Deliveries: 2, LastDeliveryTime: &earlier}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(h).WithStatusSubresource(h).Build()
	store := &storeTally{pending: transcript.HookDelivery{Count: 3, Last: at}}
	r := &SessionHookReconciler{Client: c, APIReader: c, Deliveries: store}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "ci"}}
	for range 2 { // the second finds nothing pending and changes nothing
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	got := &sessionsv1alpha1.SessionHook{}
	if err := c.Get(t.Context(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{int64(5), at, []int64{3}}, []any{got.Status.Deliveries, got.Status.LastDeliveryTime.UTC(), store.acked}); diff != "" {
		t.Errorf("deliveries, lastDeliveryTime, acknowledged (-want +got):\n%s", diff)
	}
}
