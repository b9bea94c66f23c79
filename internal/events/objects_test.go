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

package events

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func session(phase sessionsv1alpha1.SessionPhase) *sessionsv1alpha1.AgentSession {
	return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "obj-a", Namespace: "ns"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:a:main"}, Status: sessionsv1alpha1.AgentSessionStatus{Phase: phase}}
}

func TestClassify(t *testing.T) {
	send := &sessionsv1alpha1.SessionSend{Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "main"}, Status: sessionsv1alpha1.SessionSendStatus{TargetSessionKey: "agent:a:main"}}
	run := &sessionsv1alpha1.SubagentRun{Spec: sessionsv1alpha1.SubagentRunSpec{RequesterSessionKey: "agent:r:main"}}
	orphan := &sessionsv1alpha1.SubagentRun{}
	tap := func(p sessionsv1alpha1.ApprovalPhase) *sessionsv1alpha1.ToolApproval {
		return &sessionsv1alpha1.ToolApproval{Spec: sessionsv1alpha1.ToolApprovalSpec{SessionKey: "agent:a:main"}, Status: sessionsv1alpha1.ToolApprovalStatus{Phase: p}}
	}
	pending := tap(sessionsv1alpha1.ApprovalPending)
	for _, tc := range []struct {
		name                  string
		c                     ObjectChange
		kind, phase, key, obj string
		ok                    bool
	}{
		{"session created", ObjectChange{Cur: session(sessionsv1alpha1.SessionActive)}, KindSessionsChanged, PhaseCreated, "agent:a:main", "obj-a", true},
		{"session updated", ObjectChange{Old: session(sessionsv1alpha1.SessionActive), Cur: session(sessionsv1alpha1.SessionActive)}, KindSessionsChanged, PhaseUpdated, "agent:a:main", "obj-a", true},
		{"session archived", ObjectChange{Old: session(sessionsv1alpha1.SessionActive), Cur: session(sessionsv1alpha1.SessionArchived)}, KindSessionsChanged, PhaseArchived, "agent:a:main", "obj-a", true},
		{"archived session updated", ObjectChange{Old: session(sessionsv1alpha1.SessionArchived), Cur: session(sessionsv1alpha1.SessionArchived)}, KindSessionsChanged, PhaseUpdated, "agent:a:main", "obj-a", true},
		{"session deleted", ObjectChange{Old: session(sessionsv1alpha1.SessionActive)}, KindSessionsChanged, PhaseArchived, "agent:a:main", "obj-a", true},
		{"send judged by its target", ObjectChange{Cur: send}, KindSendsChanged, PhaseCreated, "agent:a:main", "agent-a-main", true},
		{"run judged by its requester", ObjectChange{Old: run, Cur: run}, KindRunsChanged, PhaseUpdated, "agent:r:main", "agent-r-main", true},
		{"run of no session", ObjectChange{Cur: orphan}, KindRunsChanged, PhaseCreated, "", "", false},
		{"approval created, not yet pending", ObjectChange{Cur: tap("")}, KindApprovalsChanged, "", "", "", false},
		{"approval requested", ObjectChange{Old: tap(""), Cur: tap(sessionsv1alpha1.ApprovalPending)}, KindApprovalsChanged, "requested", "agent:a:main", "agent-a-main", true},
		{"approval decided", ObjectChange{Old: tap(sessionsv1alpha1.ApprovalPending), Cur: tap(sessionsv1alpha1.ApprovalDenied)}, KindApprovalsChanged, "decided", "agent:a:main", "agent-a-main", true},
		{"approval expired", ObjectChange{Old: tap(sessionsv1alpha1.ApprovalPending), Cur: tap(sessionsv1alpha1.ApprovalExpired)}, KindApprovalsChanged, "expired", "agent:a:main", "agent-a-main", true},
		{"approval spec decided, status not yet", ObjectChange{Old: tap(sessionsv1alpha1.ApprovalPending), Cur: tap(sessionsv1alpha1.ApprovalPending)}, KindApprovalsChanged, "", "", "", false},
		{"approval requested, from a watch that keeps nothing", ObjectChange{Old: pending, Cur: pending}, KindApprovalsChanged, "requested", "agent:a:main", "agent-a-main", true},
		{"approval deleted", ObjectChange{Old: tap(sessionsv1alpha1.ApprovalApproved)}, KindApprovalsChanged, "", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, phase, key, name, ok := Classify(tc.c)
			if ok != tc.ok || (ok && (kind != tc.kind || phase != tc.phase || key != tc.key)) {
				t.Fatalf("got %s %s %s %v; want %s %s %s %v", kind, phase, key, ok, tc.kind, tc.phase, tc.key, tc.ok)
			}
			if ok && tc.obj == "obj-a" && name != "obj-a" {
				t.Fatalf("name %q, want the session object's own name", name)
			}
		})
	}
}
