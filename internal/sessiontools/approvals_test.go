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

package sessiontools

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestPendingApprovals(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(name string, age time.Duration, phase sessionsv1alpha1.ApprovalPhase, d sessionsv1alpha1.ApprovalDecision) *sessionsv1alpha1.ToolApproval {
		return &sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, CreationTimestamp: metav1.NewTime(epoch.Add(-age))},
			Spec: sessionsv1alpha1.ToolApprovalSpec{Decision: d}, Status: sessionsv1alpha1.ToolApprovalStatus{Phase: phase}}
	}
	c := newFakeClient(at("young", time.Minute, sessionsv1alpha1.ApprovalPending, ""), at("old", time.Hour, sessionsv1alpha1.ApprovalPending, ""),
		at("new", 0, "", ""), at("done", 2*time.Hour, sessionsv1alpha1.ApprovalApproved, sessionsv1alpha1.DecisionApproved),
		at("deciding", 2*time.Hour, sessionsv1alpha1.ApprovalPending, sessionsv1alpha1.DecisionDenied), at("expired", 3*time.Hour, sessionsv1alpha1.ApprovalExpired, ""))
	got, err := PendingApprovals(context.Background(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ta := range got {
		names = append(names, ta.Name)
	}
	if d := cmp.Diff([]string{"old", "young", "new"}, names); d != "" {
		t.Errorf("pending, oldest first (-want +got):\n%s", d)
	}
}

func TestDecide(t *testing.T) {
	cases := map[string]struct {
		d      sessionsv1alpha1.ApprovalDecision
		reason string
		want   sessionsv1alpha1.ToolApprovalSpec // "" decision: refused before any write
	}{
		"approve":               {d: sessionsv1alpha1.DecisionApproved, want: sessionsv1alpha1.ToolApprovalSpec{Decision: sessionsv1alpha1.DecisionApproved}},
		"approve with a reason": {d: sessionsv1alpha1.DecisionApproved, reason: "ok", want: sessionsv1alpha1.ToolApprovalSpec{Decision: sessionsv1alpha1.DecisionApproved, Reason: "ok"}},
		"deny with a reason":    {d: sessionsv1alpha1.DecisionDenied, reason: "no", want: sessionsv1alpha1.ToolApprovalSpec{Decision: sessionsv1alpha1.DecisionDenied, Reason: "no"}},
		"deny without a reason": {d: sessionsv1alpha1.DecisionDenied},
		"not a decision":        {d: "Maybe", reason: "x"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newFakeClient(&sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: "tap-1", Namespace: ns}})
			err := Decide(context.Background(), c, ns, "tap-1", tc.d, tc.reason)
			if (err != nil) != (tc.want.Decision == "") {
				t.Fatalf("err = %v", err)
			}
			got := &sessionsv1alpha1.ToolApproval{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "tap-1"}, got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got.Spec); d != "" {
				t.Errorf("spec (-want +got):\n%s", d)
			}
		})
	}
}
