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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestSecretRules(t *testing.T) {
	vouched := map[string]string{v1.VouchedSecretsAnnotation: FormatVouched([]string{"b", "a", "b"})}
	if diff := cmp.Diff([]string{"a", "b"}, Vouched(vouched)); diff != "" {
		t.Errorf("Vouched (-want +got):\n%s", diff)
	}
	optIn := map[string]string{v1.AgentUsableLabel: "true"}
	cases := map[string]struct {
		name         string
		owner, label map[string]string
		want         bool
	}{
		"vouched by the writer":             {name: "a", owner: vouched, want: true},
		"opted in":                          {name: "c", label: optIn, want: true},
		"neither":                           {name: "c", owner: vouched},
		"a prefix of a vouched name":        {name: "", owner: vouched},
		"the label with another value":      {name: "c", label: map[string]string{v1.AgentUsableLabel: "yes"}},
		"no annotation and no metadata":     {name: "a"},
		"vouched list names another Secret": {name: "ab", owner: vouched},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SecretUsable(tc.name, tc.owner, tc.label); got != tc.want {
				t.Errorf("SecretUsable(%q) = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
	a := &v1.Agent{Spec: v1.AgentSpec{Model: v1.ModelSpec{APIKeySecretRef: nil}}}
	if refs := AgentSecretRefs(a); len(refs) != 0 {
		t.Errorf("no key, no refs: %v", refs)
	}
	if NeedsAPIKey(v1.ProviderOpenAI) || !NeedsAPIKey(v1.ProviderAnthropic) || NeedsAPIKey(v1.ProviderScripted) {
		t.Error("only anthropic needs a key")
	}
	if msg := UnusableSecret("k"); strings.Contains(msg, "not found") || strings.Contains(msg, "no key") {
		t.Errorf("the unusable message must not tell whether the Secret or key exists: %q", msg)
	}
}
