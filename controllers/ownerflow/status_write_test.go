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
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
)

// writeStatus sends one request when the status changed and none when it did not, and a
// status computed from a stale read is refused with a conflict (the optimistic lock).
func TestWriteStatus(t *testing.T) {
	cases := map[string]struct {
		change func(*sessionsv1alpha1.SessionHook)
		// stale: the object is written once more after the read, so the base is stale.
		stale       bool
		wantWrites  int
		wantWritten bool
		wantURL     string
		conflict    bool
	}{
		"unchanged status: nothing sent": {change: func(h *sessionsv1alpha1.SessionHook) { h.Labels = map[string]string{"a": "b"} }, wantURL: "old"},
		"changed status: one update":     {change: func(h *sessionsv1alpha1.SessionHook) { h.Status.URL = "new" }, wantWrites: 1, wantWritten: true, wantURL: "new"},
		"stale read: a conflict, nothing written": {change: func(h *sessionsv1alpha1.SessionHook) { h.Status.URL = "new" }, stale: true,
			wantWrites: 1, conflict: true, wantURL: "old"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			writes := 0
			seed := &sessionsv1alpha1.SessionHook{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h"}, Status: sessionsv1alpha1.SessionHookStatus{URL: "old", Deliveries: 3}}
			c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(seed).
				WithStatusSubresource(&sessionsv1alpha1.SessionHook{}).Build(), interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					writes++
					return c.SubResource(sub).Update(ctx, obj, opts...)
				}})
			h := &sessionsv1alpha1.SessionHook{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(seed), h); err != nil {
				t.Fatal(err)
			}
			if tc.stale {
				newer := h.DeepCopy()
				newer.Labels = map[string]string{"moved": "on"}
				if err := c.Update(ctx, newer); err != nil {
					t.Fatal(err)
				}
			}
			base := h.DeepCopy()
			tc.change(h)
			written, err := WriteStatus(ctx, c, base, h)
			if apierrors.IsConflict(err) != tc.conflict || (err != nil && !tc.conflict) {
				t.Fatalf("err %v, want conflict %v", err, tc.conflict)
			}
			got := &sessionsv1alpha1.SessionHook{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(seed), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{tc.wantWrites, tc.wantWritten, tc.wantURL, int64(3)},
				[]any{writes, written, got.Status.URL, got.Status.Deliveries}); diff != "" {
				t.Errorf("writes, written, url, deliveries (-want +got):\n%s", diff)
			}
		})
	}
}
