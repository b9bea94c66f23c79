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

package subagentrun

import (
	"context"
	"errors"
	"github.com/agent-sessions/agent-session-operator/controllers/announce"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow/ownerflowtest"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

func runReconciler(f *ownerflowtest.Fixture) *SubagentRunReconciler {
	return (&SubagentRunReconciler{OwnerDeps: f.Deps(), Announcer: announce.New(lookup.New(f.C, nil), nil, delivery.New(nil), nil, nil), TTL: time.Hour}).wire()
}

func run(mut ...func(*sessionsv1alpha1.SubagentRun)) *sessionsv1alpha1.SubagentRun {
	r := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Name: "run", Namespace: "ns", UID: "r1"},
		Spec: sessionsv1alpha1.SubagentRunSpec{Task: "look", AgentID: "research"}}
	for _, m := range mut {
		m(r)
	}
	return r
}

func TestSubagentRunSteps(t *testing.T) {
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: "ns"}}
	childKey := "agent:research:subagent:r1"
	child := ownerflowtest.Session(childKey, "research")
	// The run created its child: it is the child's controller.
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: "SubagentRun",
		Name: "run", UID: "r1", Controller: ptr.To(true)}}
	running := func(r *sessionsv1alpha1.SubagentRun) {
		now := metav1.NewTime(ownerflowtest.Epoch)
		r.Status = sessionsv1alpha1.SubagentRunStatus{Status: "accepted", Phase: sessionsv1alpha1.RunRunning, ChildSessionKey: childKey, OwnerStatus: sessionsv1alpha1.OwnerStatus{StartedAt: &now}}
	}
	cases := map[string]struct {
		objs      []client.Object
		results   map[string]turns.TurnResult
		Phase     sessionsv1alpha1.RunPhase
		condition string
		notes     string
		submitted []string
	}{
		"the child is made first": {objs: []client.Object{run(), agent}},
		"accepted, then the task runs": {
			objs: []client.Object{run(), agent, child}, Phase: sessionsv1alpha1.RunRunning, submitted: []string{"r1/task"},
		},
		"a missing agent fails": {objs: []client.Object{run()}, Phase: sessionsv1alpha1.RunFailed, condition: sessionsv1alpha1.ConditionFailed, notes: `agent "research" not found`},
		"a child gone fails with the reason, not a requeue forever": {
			objs: []client.Object{run(running), agent}, Phase: sessionsv1alpha1.RunFailed, condition: sessionsv1alpha1.ConditionFailed, notes: "was deleted before the run finished",
		},
		"done: Completed with the child kept": {
			objs: []client.Object{run(running), agent, child}, results: map[string]turns.TurnResult{"r1/task": {Text: "found"}},
			Phase: sessionsv1alpha1.RunSucceeded, condition: sessionsv1alpha1.ConditionCompleted,
		},
		"a failed task is Failed, not Completed": {
			objs: []client.Object{run(running), agent, child}, results: map[string]turns.TurnResult{"r1/task": {Err: errors.New("boom")}},
			Phase: sessionsv1alpha1.RunFailed, condition: sessionsv1alpha1.ConditionFailed, notes: "boom",
		},
		"spec.cancel: Cancelled, announced, nothing more run": {
			objs:  []client.Object{run(running, func(r *sessionsv1alpha1.SubagentRun) { r.Spec.Cancel = true }), agent, child},
			Phase: sessionsv1alpha1.RunCancelled, condition: sessionsv1alpha1.ConditionCancelled, notes: "cancelled by spec.cancel",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := ownerflowtest.NewFixture(t, nil, tc.objs...)
			for k, v := range tc.results {
				f.Runner.Results[k] = v
			}
			key := types.NamespacedName{Namespace: "ns", Name: "run"}
			if _, err := runReconciler(f).Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}
			got := &sessionsv1alpha1.SubagentRun{}
			if err := f.C.Get(context.Background(), key, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != tc.Phase {
				t.Errorf("phase = %q, want %q (notes %q)", got.Status.Phase, tc.Phase, got.Status.Notes)
			}
			for _, typ := range []string{sessionsv1alpha1.ConditionCompleted, sessionsv1alpha1.ConditionFailed, sessionsv1alpha1.ConditionCancelled} {
				if set := meta.IsStatusConditionTrue(got.Status.Conditions, typ); set != (typ == tc.condition) {
					t.Errorf("condition %s = %v", typ, set)
				}
			}
			if tc.notes != "" && !strings.Contains(got.Status.Notes, tc.notes) {
				t.Errorf("notes = %q, want it to say %q", got.Status.Notes, tc.notes)
			}
			if diff := cmp.Diff(tc.submitted, f.Runner.Submitted); diff != "" {
				t.Errorf("submitted turns (-want +got):\n%s", diff)
			}
			if tc.condition == sessionsv1alpha1.ConditionCompleted {
				kept := &sessionsv1alpha1.AgentSession{}
				if err := f.C.Get(context.Background(), client.ObjectKeyFromObject(child), kept); err != nil {
					t.Fatal(err)
				}
				if _, ok := kept.Annotations[sessionsv1alpha1.ArchiveAtAnnotation]; !ok || kept.Status.Phase == sessionsv1alpha1.SessionArchived {
					t.Errorf("kept child: annotations %v, phase %q; want an archive-at request and its status untouched", kept.Annotations, kept.Status.Phase)
				}
			}
		})
	}
}
