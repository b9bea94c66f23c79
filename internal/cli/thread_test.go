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

package cli

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// history names the thread a thread-bound child's announces go to, and the run that bound
// it; other sessions get no line.
func TestThreadBindingLine(t *testing.T) {
	const child = "agent:worker:subagent:7"
	run := func(thread bool, bound *sessionsv1alpha1.AnnounceThread) *sessionsv1alpha1.SubagentRun {
		r := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dig", UID: "run-uid"},
			Spec: sessionsv1alpha1.SubagentRunSpec{Task: "dig", Thread: thread}}
		if bound != nil {
			r.Status.Announce = &sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceDelivered, Thread: bound}
		}
		return r
	}
	session := func(dc *sessionsv1alpha1.DeliveryContext) *sessionsv1alpha1.AgentSession {
		return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: sessionkey.ObjectName(child),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: "SubagentRun", Name: "dig", UID: "run-uid", Controller: ptr.To(true)}}},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: child, AgentID: "worker", DeliveryContext: dc}}
	}
	bound := &sessionsv1alpha1.DeliveryContext{Channel: "telegram", To: "-1001234", ThreadID: "subagent-run-uid"}
	for name, tc := range map[string]struct {
		objs []client.Object
		want string
	}{
		"bound, its thread opened": {objs: []client.Object{session(bound), run(true, &sessionsv1alpha1.AnnounceThread{Channel: "telegram", ID: "77"})},
			want: "# bound to telegram chat -1001234, thread 77, by subagentrun/dig"},
		"bound, the announce still to come": {objs: []client.Object{session(bound), run(true, nil)},
			want: "# bound to telegram chat -1001234, a thread its announce opens (not yet), by subagentrun/dig"},
		"a run that is not thread-bound": {objs: []client.Object{session(nil), run(false, nil)}},
		"the run gone":                   {objs: []client.Object{session(bound)}},
	} {
		t.Run(name, func(t *testing.T) {
			cl := testenv.IndexFake(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tc.objs...)).Build()
			if diff := cmp.Diff(tc.want, threadBindingOf(context.Background(), cl, "team", child)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
