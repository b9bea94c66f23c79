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

package envtest

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The Agent controller holds the Secret rule at use time, without the webhook (this suite
// runs none): a Secret is used only when the Agent's writer vouched for it or it opted in,
// and the Ready condition says nothing about a Secret that is neither.
var _ = Describe("Agent API key Secrets", func() {
	ready := func(ns, name string) func(g Gomega) *metav1.Condition {
		return func(g Gomega) *metav1.Condition {
			a := &sessionsv1alpha1.Agent{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, a)).To(Succeed())
			c := meta.FindStatusCondition(a.Status.Conditions, sessionsv1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			return c
		}
	}
	agent := func(ns, name, secret, vouched string) *sessionsv1alpha1.Agent {
		a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderOpenAI, Name: "m", BaseURL: "http://127.0.0.1:9/v1"}}}
		if secret != "" {
			a.Spec.Model.APIKeySecretRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "apiKey"}
		}
		if vouched != "" {
			a.Annotations = map[string]string{sessionsv1alpha1.VouchedSecretsAnnotation: vouched}
		}
		return a
	}

	It("uses only vouched or opted-in Secrets and tells nothing about others", func() {
		ns := newNamespace()
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-key"}, StringData: map[string]string{"apiKey": "s3cret"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared-key", Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
				StringData: map[string]string{"apiKey": "shared"}},
			agent(ns, "unvouched", "team-key", ""),
			agent(ns, "ghost", "no-such-key", ""),
			agent(ns, "wrongkey", "team-key", "other-key"),
			agent(ns, "vouched", "team-key", "team-key"),
			agent(ns, "shared", "shared-key", ""),
			agent(ns, "keyless", "", ""),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		for name, secret := range map[string]string{"unvouched": "team-key", "ghost": "no-such-key", "wrongkey": "team-key"} {
			Eventually(ready(ns, name), testenv.Timeout, testenv.Interval).Should(And(
				HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", "SecretNotUsable"),
				HaveField("Message", policy.UnusableSecret(secret)),
			), name)
		}
		for _, name := range []string{"vouched", "shared", "keyless"} {
			Eventually(ready(ns, name), testenv.Timeout, testenv.Interval).Should(HaveField("Status", metav1.ConditionTrue), name)
		}
	})

	It("holds MCP header Secrets and server URLs to the same rules", func() {
		ns := newNamespace()
		// Loopback: the suite's egress policy refuses it, as the manager's default does.
		mcpAgent := func(name string, srv sessionsv1alpha1.MCPServer) *sessionsv1alpha1.Agent {
			a := agent(ns, name, "", "")
			a.Spec.Model = sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}
			a.Spec.Tools.MCPServers = []sessionsv1alpha1.MCPServer{srv}
			return a
		}
		header := func(secret string) []sessionsv1alpha1.MCPHeader {
			return []sessionsv1alpha1.MCPHeader{{Name: "Authorization", ValueFrom: sessionsv1alpha1.MCPHeaderSource{SecretKeyRef: corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "header"}}}}
		}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mcp-token"}, StringData: map[string]string{"header": "Bearer s3cret"}},
			mcpAgent("loopback", sessionsv1alpha1.MCPServer{Name: "local", URL: "http://127.0.0.1:9/mcp"}),
			mcpAgent("borrowed", sessionsv1alpha1.MCPServer{Name: "tools", URL: "https://mcp.example.invalid/mcp", Headers: header("mcp-token")}),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(ready(ns, "loopback"), testenv.Timeout, testenv.Interval).Should(And(
			HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", "EgressRefused"),
			HaveField("Message", ContainSubstring("MCP server local: url refused: egress to 127.0.0.1:9 refused")),
		))
		Eventually(ready(ns, "borrowed"), testenv.Timeout, testenv.Interval).Should(And(
			HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", "SecretNotUsable"),
			HaveField("Message", "MCP server tools: header Authorization: "+policy.UnusableSecret("mcp-token")),
		))
	})
})
