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

package webhook

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
)

// A schedule naming an Agent that does not exist is admitted (GitOps may apply it first)
// with a warning that says its ticks wait; one whose Agent exists, or that is refused, gets
// none.
func TestScheduleWithoutItsAgentIsWarned(t *testing.T) {
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "bot", Namespace: "team"}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(agent).Build()
	v := &SessionScheduleValidator{starters{Reader: c, APIReader: c}}
	schedule := func(agentID string) *sessionsv1alpha1.SessionSchedule {
		return &sessionsv1alpha1.SessionSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "team"},
			Spec: sessionsv1alpha1.SessionScheduleSpec{Schedule: "@daily", AgentID: agentID, Message: "digest"}}
	}
	refused := errors.New("refused")
	for name, tc := range map[string]struct {
		agentID string
		check   error
		want    admission.Warnings
	}{
		"its Agent exists":    {agentID: "bot"},
		"no such Agent":       {agentID: "ghost", want: admission.Warnings{"spec.agentId: " + policy.ScheduleAgentMissing("ghost", "team")}},
		"refused, no warning": {agentID: "ghost", check: refused},
	} {
		t.Run(name, func(t *testing.T) {
			admit := onSpecChange[*sessionsv1alpha1.SessionSchedule]{warn: v.Warnings,
				check: func(context.Context, *sessionsv1alpha1.SessionSchedule) error { return tc.check },
				spec:  func(s *sessionsv1alpha1.SessionSchedule) any { return s.Spec }}
			got, err := admit.ValidateCreate(context.Background(), schedule(tc.agentID))
			if !errors.Is(err, tc.check) {
				t.Errorf("err = %v, want %v", err, tc.check)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
