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

package policy

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestCheckAttachAs(t *testing.T) {
	cases := map[string]struct {
		a    *sessionsv1alpha1.AttachAs
		want string // "" = valid
	}{
		"none":            {},
		"no mountPath":    {a: &sessionsv1alpha1.AttachAs{}},
		"a relative path": {a: &sessionsv1alpha1.AttachAs{MountPath: "inputs/data"}},
		"a dotted name":   {a: &sessionsv1alpha1.AttachAs{MountPath: "inputs/..data"}},
		"absolute":        {a: &sessionsv1alpha1.AttachAs{MountPath: "/etc"}, want: "spec.attachAs.mountPath: Invalid value: \"/etc\": must be a relative path inside the workspace, not an absolute one"},
		"up and out":      {a: &sessionsv1alpha1.AttachAs{MountPath: "inputs/../../etc"}, want: "spec.attachAs.mountPath: Invalid value: \"inputs/../../etc\": must stay inside the workspace: no .. element"},
		"the workspace":   {a: &sessionsv1alpha1.AttachAs{MountPath: "./"}, want: "spec.attachAs.mountPath: Invalid value: \"./\": must name a directory inside the workspace, not the workspace itself"},
		"a backslash":     {a: &sessionsv1alpha1.AttachAs{MountPath: `a\b`}, want: `spec.attachAs.mountPath: Invalid value: "a\\b": must not contain \`},
		"a control":       {a: &sessionsv1alpha1.AttachAs{MountPath: "a\nb"}, want: "spec.attachAs.mountPath: Invalid value: \"a\\nb\": must not contain NUL or control characters"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := CheckAttachAs(tc.a, field.NewPath("spec", "attachAs")).ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tc.want != "" && (got == nil || got.Error() != tc.want):
				t.Errorf("got %v, want %s", got, tc.want)
			}
		})
	}
}
