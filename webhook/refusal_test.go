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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestRefusal(t *testing.T) {
	spec := field.NewPath("spec")
	policyDenial := field.Forbidden(spec.Child("agentId"), "agent main may not spawn under agent ops")
	badModel := field.NotSupported(spec.Child("model"), "big", []string{"small"})
	noThread := field.Invalid(spec.Child("mode"), "session", "mode session requires thread: true")
	badAttachment := field.Invalid(spec.Child("attachments").Index(0).Child("content"), "<base64>", "not valid base64")
	cases := map[string]struct {
		errs      field.ErrorList
		want      string // forbidden or invalid
		mentions  []string
		leavesOut []string
	}{
		"a model not allowed":          {errs: field.ErrorList{badModel}, want: "invalid", mentions: []string{"spec.model"}},
		"mode session without thread":  {errs: field.ErrorList{noThread}, want: "invalid", mentions: []string{"spec.mode"}},
		"a bad attachment":             {errs: field.ErrorList{badAttachment}, want: "invalid", mentions: []string{"spec.attachments[0].content"}},
		"allowAgents":                  {errs: field.ErrorList{policyDenial}, want: "forbidden", mentions: []string{"spec.agentId: Forbidden: agent main may not spawn"}},
		"a policy denial and bad args": {errs: field.ErrorList{badModel, policyDenial}, want: "forbidden", mentions: []string{"may not spawn"}, leavesOut: []string{"spec.model"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := refusal("subagentruns", "SubagentRun", "r", tc.errs)
			got := map[bool]string{true: "forbidden", false: "invalid"}[apierrors.IsForbidden(err)]
			if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kind (-want +got):\n%s", diff)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%q does not mention %q", err, m)
				}
			}
			for _, m := range tc.leavesOut {
				if strings.Contains(err.Error(), m) {
					t.Errorf("%q mentions %q", err, m)
				}
			}
		})
	}
}
