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

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestPendingApprovals(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(name string, age time.Duration, phase v1.ApprovalPhase, d v1.ApprovalDecision) *v1.ToolApproval {
		return &v1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, CreationTimestamp: metav1.NewTime(epoch.Add(-age))},
			Spec: v1.ToolApprovalSpec{Decision: d}, Status: v1.ToolApprovalStatus{Phase: phase}}
	}
	c := newFakeClient(at("young", time.Minute, v1.ApprovalPending, ""), at("old", time.Hour, v1.ApprovalPending, ""),
		at("new", 0, "", ""), at("done", 2*time.Hour, v1.ApprovalApproved, v1.DecisionApproved),
		at("deciding", 2*time.Hour, v1.ApprovalPending, v1.DecisionDenied), at("expired", 3*time.Hour, v1.ApprovalExpired, ""))
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
		d      v1.ApprovalDecision
		reason string
		want   v1.ToolApprovalSpec // "" decision: refused before any write
	}{
		"approve":               {d: v1.DecisionApproved, want: v1.ToolApprovalSpec{Decision: v1.DecisionApproved}},
		"approve with a reason": {d: v1.DecisionApproved, reason: "ok", want: v1.ToolApprovalSpec{Decision: v1.DecisionApproved, Reason: "ok"}},
		"deny with a reason":    {d: v1.DecisionDenied, reason: "no", want: v1.ToolApprovalSpec{Decision: v1.DecisionDenied, Reason: "no"}},
		"deny without a reason": {d: v1.DecisionDenied},
		"not a decision":        {d: "Maybe", reason: "x"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newFakeClient(&v1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: "tap-1", Namespace: ns}})
			err := Decide(context.Background(), c, ns, "tap-1", tc.d, tc.reason)
			if (err != nil) != (tc.want.Decision == "") {
				t.Fatalf("err = %v", err)
			}
			got := &v1.ToolApproval{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "tap-1"}, got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got.Spec); d != "" {
				t.Errorf("spec (-want +got):\n%s", d)
			}
		})
	}
}
