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

package argocdhealth

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite config/argocd/argocd-cm-patch.yaml from health.lua")

var configDir = filepath.Join("..", "..", "config", "argocd")

// The patch users apply holds the script, byte for byte: it cannot drift from what the
// envtest suite runs (controllers/envtest gitops_health_test.go).
func TestConfigMapPatch(t *testing.T) {
	script, err := Script(configDir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ConfigMapPatch(script)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(configDir, "argocd-cm-patch.yaml")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is not generated from health.lua; run go test ./internal/argocdhealth -run TestConfigMapPatch -update (-want +got):\n%s", path, diff)
	}
}

// What Argo CD makes of objects that no operator wrote: the envtest suite covers the phases
// of real objects.
func TestEvaluate(t *testing.T) {
	script, err := Script(configDir)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		obj  map[string]any
		want Health
	}{
		"an old object without status": {
			obj:  map[string]any{"metadata": map[string]any{"generation": int64(1)}},
			want: Health{"Progressing", "Waiting for the operator to observe this generation"},
		},
		"a spec change the operator has not seen": {
			obj: map[string]any{"metadata": map[string]any{"generation": int64(3)}, "status": map[string]any{"observedGeneration": int64(2),
				"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "InForce", "message": "the policy is in force"}}}},
			want: Health{"Progressing", "Waiting for the operator to observe this generation"},
		},
		"a ToolApproval waiting for a person": {
			obj: map[string]any{"kind": "ToolApproval", "metadata": map[string]any{"generation": int64(1)}, "status": map[string]any{"observedGeneration": int64(1), "phase": "Pending",
				"conditions": []any{map[string]any{"type": "Decided", "status": "False", "reason": "Pending", "message": "waiting for a person with the verb approve"}}}},
			want: Health{"Suspended", "Decided: waiting for a person with the verb approve"},
		},
		"a ToolApproval decided": {
			obj: map[string]any{"kind": "ToolApproval", "metadata": map[string]any{"generation": int64(2)}, "status": map[string]any{"observedGeneration": int64(2), "phase": "Approved",
				"conditions": []any{map[string]any{"type": "Decided", "status": "True", "reason": "Approved", "message": "Approved by carol"}}}},
			want: Health{"Healthy", "Decided: Approved by carol"},
		},
		"a suspended schedule": {
			obj: map[string]any{"kind": "SessionSchedule", "metadata": map[string]any{"generation": int64(2)}, "spec": map[string]any{"suspend": true},
				"status": map[string]any{"observedGeneration": int64(2),
					"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Suspended", "message": "suspended"}}}},
			want: Health{"Suspended", "spec.suspend: no new ticks"},
		},
		"a schedule that ticks": {
			obj: map[string]any{"kind": "SessionSchedule", "metadata": map[string]any{"generation": int64(2)}, "spec": map[string]any{"suspend": false},
				"status": map[string]any{"observedGeneration": int64(2),
					"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Scheduled", "message": "next tick at 10:00"}}}},
			want: Health{"Healthy", "Ready: next tick at 10:00"},
		},
		"a session whose sandbox cannot start": {
			obj: map[string]any{"kind": "AgentSession", "metadata": map[string]any{"generation": int64(1)}, "status": map[string]any{"observedGeneration": int64(1),
				"sandbox": map[string]any{"claim": "s1", "phase": "Failed", "message": "WarmPoolNotFound: no pool"},
				"conditions": []any{
					map[string]any{"type": "Ready", "status": "False", "reason": "SandboxFailed", "message": "the sandbox cannot start: WarmPoolNotFound: no pool"},
					map[string]any{"type": "Stalled", "status": "True", "reason": "SandboxFailed", "message": "the sandbox cannot start: WarmPoolNotFound: no pool"}}}},
			want: Health{"Degraded", "SandboxFailed: the sandbox cannot start: WarmPoolNotFound: no pool"},
		},
		"a session whose sandbox is suspended": {
			obj: map[string]any{"kind": "AgentSession", "metadata": map[string]any{"generation": int64(1)}, "status": map[string]any{"observedGeneration": int64(1),
				"sandbox":    map[string]any{"claim": "s1", "phase": "Suspended"},
				"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "TranscriptReady", "message": "the transcript exists"}}}},
			want: Health{"Healthy", "Ready: the transcript exists"},
		},
		"a send observed with no condition yet": {
			obj:  map[string]any{"metadata": map[string]any{"generation": int64(1)}, "status": map[string]any{"observedGeneration": int64(1)}},
			want: Health{"Progressing", "Waiting for the operator"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Evaluate(script, c.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Every kind of the API gets its health: a new kind is added to Kinds (and so to the patch).
func TestKindsAreEveryKindOfTheAPI(t *testing.T) {
	s := runtime.NewScheme()
	if err := sessionsv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	known := s.KnownTypes(sessionsv1alpha1.GroupVersion)
	var kinds []string
	for kind := range known {
		// A kind of the API has its list; the meta types the scheme adds have none.
		if _, listed := known[kind+"List"]; listed {
			kinds = append(kinds, kind)
		}
	}
	if diff := cmp.Diff(kinds, Kinds, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("Kinds are not the API's kinds (-api +Kinds):\n%s", diff)
	}
}

func TestEvaluateRefusesWhatArgoCDRefuses(t *testing.T) {
	for name, script := range map[string]string{
		"no table":                        `return "Healthy"`,
		"unknown status":                  `return {status = "Fine"}`,
		"a library Argo CD does not open": `return {status = string.upper("healthy")}`,
	} {
		if _, err := Evaluate(script, map[string]any{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
