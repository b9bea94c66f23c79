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
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// SecretRef is one Secret an object would make the manager read, and the field naming it.
type SecretRef struct {
	Path *field.Path
	Name string
	Key  string
}

func secretRef(path *field.Path, s *corev1.SecretKeySelector) []SecretRef {
	if s == nil || s.Name == "" {
		return nil
	}
	return []SecretRef{{Path: path, Name: s.Name, Key: s.Key}}
}

// AgentSecretRefs lists every Secret an Agent references. Each new field that names a
// Secret (e.g. MCP server headers) is added here, and the webhook and controllers cover it.
func AgentSecretRefs(a *sessionsv1alpha1.Agent) []SecretRef {
	refs := secretRef(field.NewPath("spec", "model", "apiKeySecretRef"), a.Spec.Model.APIKeySecretRef)
	servers := field.NewPath("spec", "tools", "mcpServers")
	for i, srv := range a.Spec.Tools.MCPServers {
		for j := range srv.Headers {
			path := servers.Index(i).Child("headers").Index(j).Child("valueFrom", "secretKeyRef")
			refs = append(refs, secretRef(path, &srv.Headers[j].ValueFrom.SecretKeyRef)...)
		}
	}
	remotes := field.NewPath("spec", "tools", "a2aAgents")
	for i, ra := range a.Spec.Tools.A2AAgents {
		for j := range ra.Headers {
			path := remotes.Index(i).Child("headers").Index(j).Child("valueFrom", "secretKeyRef")
			refs = append(refs, secretRef(path, &ra.Headers[j].ValueFrom.SecretKeyRef)...)
		}
		if ra.Verify != nil {
			refs = append(refs, secretRef(remotes.Index(i).Child("verify", "jwksSecretRef"), ra.Verify.JWKSSecretRef)...)
		}
	}
	return refs
}

// PolicySecretRefs lists every Secret a SessionPolicy's delivery sinks reference.
func PolicySecretRefs(p *sessionsv1alpha1.SessionPolicy) []SecretRef {
	var refs []SecretRef
	for i := range p.Spec.Delivery {
		sink := field.NewPath("spec", "delivery").Index(i)
		refs = append(refs, secretRef(sink.Child("secretRef"), p.Spec.Delivery[i].SecretRef)...)
		refs = append(refs, secretRef(sink.Child("signingSecretRef"), p.Spec.Delivery[i].SigningSecretRef)...)
	}
	return refs
}

// OptedIn reports whether a Secret's labels let any Agent or sink of its namespace use it.
func OptedIn(labels map[string]string) bool {
	return labels[sessionsv1alpha1.AgentUsableLabel] == "true"
}

// Vouched is the set of Secret names an object's VouchedSecretsAnnotation lists.
func Vouched(annotations map[string]string) []string {
	s := annotations[sessionsv1alpha1.VouchedSecretsAnnotation]
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// FormatVouched is the VouchedSecretsAnnotation value for names: sorted, unique.
func FormatVouched(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ",")
}

// SecretUsable is the use-time rule: the manager may read the Secret named name for an
// object with the given annotations when the object's last writer vouched for it, or when the
// Secret opted in (labels, nil when its metadata was not read).
func SecretUsable(name string, ownerAnnotations, secretLabels map[string]string) bool {
	return slices.Contains(Vouched(ownerAnnotations), name) || OptedIn(secretLabels)
}

// UnusableSecret is the one message for a Secret that may not be used, whether or not it
// exists and whatever it holds: neither admission nor status tells a user who cannot read a
// Secret anything about it.
func UnusableSecret(name string) string {
	return fmt.Sprintf("Secret %q is not usable here: its creator must be allowed to get it (re-apply as such a user), or the Secret must carry the label %s=true",
		name, sessionsv1alpha1.AgentUsableLabel)
}

// SecretDenial is the admission message for a reference the request's user may not make.
func SecretDenial(user, name string) string {
	return fmt.Sprintf("user %q may not get Secret %q: reference only a Secret you may get (grant get on secrets/%s), or label the Secret %s=true to let agents use it",
		user, name, name, sessionsv1alpha1.AgentUsableLabel)
}

// NeedsAPIKey reports whether a provider cannot run without an API key: anthropic does;
// openai-compatible servers such as Ollama and vLLM need none; scripted never calls out.
func NeedsAPIKey(p sessionsv1alpha1.ProviderName) bool {
	return p == sessionsv1alpha1.ProviderAnthropic
}

// HookSecretRefs lists the Secret a SessionHook references: its signing secret.
func HookSecretRefs(h *sessionsv1alpha1.SessionHook) []SecretRef {
	return secretRef(field.NewPath("spec", "signingSecretRef"), &h.Spec.SigningSecretRef)
}
