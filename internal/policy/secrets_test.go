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
	corev1 "k8s.io/api/core/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestSecretRules(t *testing.T) {
	vouched := map[string]string{sessionsv1alpha1.VouchedSecretsAnnotation: FormatVouched([]string{"b", "a", "b"})}
	if diff := cmp.Diff([]string{"a", "b"}, Vouched(vouched)); diff != "" {
		t.Errorf("Vouched (-want +got):\n%s", diff)
	}
	optIn := map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}
	cases := map[string]struct {
		name         string
		owner, label map[string]string
		want         bool
	}{
		"vouched by the writer":             {name: "a", owner: vouched, want: true},
		"opted in":                          {name: "c", label: optIn, want: true},
		"neither":                           {name: "c", owner: vouched},
		"a prefix of a vouched name":        {name: "", owner: vouched},
		"the label with another value":      {name: "c", label: map[string]string{sessionsv1alpha1.AgentUsableLabel: "yes"}},
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
	a := &sessionsv1alpha1.Agent{Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{APIKeySecretRef: nil}}}
	if refs := AgentSecretRefs(a); len(refs) != 0 {
		t.Errorf("no key, no refs: %v", refs)
	}
	if NeedsAPIKey(sessionsv1alpha1.ProviderOpenAI) || !NeedsAPIKey(sessionsv1alpha1.ProviderAnthropic) || NeedsAPIKey(sessionsv1alpha1.ProviderScripted) {
		t.Error("only anthropic needs a key")
	}
	if msg := UnusableSecret("k"); strings.Contains(msg, "not found") || strings.Contains(msg, "no key") {
		t.Errorf("the unusable message must not tell whether the Secret or key exists: %q", msg)
	}
}

// Every Secret an Agent's headers name is vouched for and judged: its MCP servers' and its
// remote A2A agents', and the key set a remote agent's card must verify with.
func TestAgentSecretRefsHeaders(t *testing.T) {
	header := func(secret string) []sessionsv1alpha1.MCPHeader {
		return []sessionsv1alpha1.MCPHeader{{Name: "Authorization", ValueFrom: sessionsv1alpha1.MCPHeaderSource{SecretKeyRef: secretKey(secret)}}}
	}
	a := &sessionsv1alpha1.Agent{Spec: sessionsv1alpha1.AgentSpec{Tools: sessionsv1alpha1.ToolsSpec{
		MCPServers: []sessionsv1alpha1.MCPServer{{Name: "m", Headers: header("mcp-token")}},
		A2AAgents: []sessionsv1alpha1.A2AAgent{{Name: "planner", Headers: header("planner-token"),
			Verify: &sessionsv1alpha1.A2AVerify{JWKSSecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "planner-keys"}, Key: "jwks.json"}}}},
	}}}
	var got []string
	for _, r := range AgentSecretRefs(a) {
		got = append(got, r.Path.String()+"="+r.Name)
	}
	want := []string{"spec.tools.mcpServers[0].headers[0].valueFrom.secretKeyRef=mcp-token",
		"spec.tools.a2aAgents[0].headers[0].valueFrom.secretKeyRef=planner-token",
		"spec.tools.a2aAgents[0].verify.jwksSecretRef=planner-keys"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("AgentSecretRefs (-want +got):\n%s", d)
	}
}

func secretKey(name string) corev1.SecretKeySelector {
	return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "header"}
}

// A sink's token and its signing secret are both vouched for and judged.
func TestPolicySecretRefs(t *testing.T) {
	token, signing := secretKey("bot"), secretKey("whsec")
	p := &sessionsv1alpha1.SessionPolicy{Spec: sessionsv1alpha1.SessionPolicySpec{Delivery: []sessionsv1alpha1.DeliverySink{
		{Channel: "telegram", Kind: sessionsv1alpha1.DeliveryTelegram, SecretRef: &token},
		{Channel: "webchat", URL: "https://hooks.example", SigningSecretRef: &signing},
	}}}
	var got []string
	for _, r := range PolicySecretRefs(p) {
		got = append(got, r.Path.String()+"="+r.Name)
	}
	want := []string{"spec.delivery[0].secretRef=bot", "spec.delivery[1].signingSecretRef=whsec"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("PolicySecretRefs (-want +got):\n%s", d)
	}
}
