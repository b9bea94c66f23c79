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
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// sessions_spawn's arguments: task is required (nothing is created without one);
// attachAs is validated and recorded on the run, never dropped.
func TestSpawnArguments(t *testing.T) {
	agent := &sessionsv1alpha1.Agent{}
	agent.Name, agent.Namespace = "bob", ns
	self := session("agent:bob:main", "bob", "sid-bob")
	cases := map[string]struct {
		args     string
		wantErr  string
		attachAs *sessionsv1alpha1.AttachAs
	}{
		"no task":       {args: `{"label":"x"}`, wantErr: "task is required"},
		"an empty task": {args: `{"task":"","attachAs":{"mountPath":"in"}}`, wantErr: "task is required"},
		"attachAs recorded": {args: `{"task":"look","attachAs":{"mountPath":"inputs/data"}}`,
			attachAs: &sessionsv1alpha1.AttachAs{MountPath: "inputs/data"}},
		"attachAs outside the workspace": {args: `{"task":"look","attachAs":{"mountPath":"../up"}}`,
			wantErr: `attachAs.mountPath: Invalid value: "../up": must stay inside the workspace: no .. element`},
		"no attachAs": {args: `{"task":"look"}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fc := newFakeClient(self.DeepCopy(), agent.DeepCopy())
			c := &Call{Env: &Env{Client: fc, Reader: fc}, Namespace: ns, Session: self, Agent: agent, ID: name}
			out, err := spawnTool().Run(t.Context(), c, json.RawMessage(tc.args))
			var runs sessionsv1alpha1.SubagentRunList
			if lerr := fc.List(t.Context(), &runs); lerr != nil {
				t.Fatal(lerr)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v (result %+v), want %q", err, out, tc.wantErr)
				}
				if got := ErrorResult(err); !strings.HasPrefix(got, `{"status":"error"`) {
					t.Errorf("result %s, want status error (an argument error)", got)
				}
				if len(runs.Items) != 0 {
					t.Errorf("a run was created: %+v", runs.Items[0].Spec)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(runs.Items) != 1 {
				t.Fatalf("%d runs, want 1", len(runs.Items))
			}
			if diff := cmp.Diff(tc.attachAs, runs.Items[0].Spec.AttachAs); diff != "" {
				t.Errorf("spec.attachAs (-want +got):\n%s", diff)
			}
		})
	}
}
