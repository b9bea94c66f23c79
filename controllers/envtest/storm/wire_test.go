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

package storm

import (
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// tokenSecret holds the Authorization header the agents' tools call the doors with.
const tokenSecret = "door-token"

// doorCaller is what the agents' tools need to call the doors of ns: a ServiceAccount
// allowed the namespace (its token, for the doors' audience, in tokenSecret, which any
// Agent of the namespace may use).
func doorCaller(ns string) []client.Object {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "caller", Namespace: ns}}
	Expect(k8s.Create(ctx, sa)).To(Succeed())
	Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "caller", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "caller", Namespace: ns}}})).To(Succeed())
	cs, err := kubernetes.NewForConfig(suite.Config)
	Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "caller",
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{audience}}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: tokenSecret, Namespace: ns,
		Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
		StringData: map[string]string{"authorization": "Bearer " + tr.Status.Token}}}
}

var authorization = []sessionsv1alpha1.MCPHeader{{Name: "Authorization", ValueFrom: sessionsv1alpha1.MCPHeaderSource{
	SecretKeyRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: tokenSecret}, Key: "authorization"}}}}

// callsOnAnyInput is a scripted agent that answers every input by calling tool with args
// and replying with what it returned.
func callsOnAnyInput(tool string, args any) *sessionsv1alpha1.Agent {
	raw, err := json.Marshal(args)
	Expect(err).NotTo(HaveOccurred())
	return &sessionsv1alpha1.Agent{Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted,
		Script: []sessionsv1alpha1.ScriptRule{{Match: "^", Reply: "{{toolResults}}",
			ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: tool, Arguments: &runtime.RawExtension{Raw: raw}}}}}}}}
}

// a2aPeer is an agent whose remote A2A agent "peer" is the next agent of the ring, reached
// at base (the doors, or a relay in front of them), and which calls it on every input.
func a2aPeer(base string) func(ns, name, next string) *sessionsv1alpha1.Agent {
	return func(ns, _, next string) *sessionsv1alpha1.Agent {
		a := callsOnAnyInput("a2a__peer", map[string]string{"message": "{{input}}"})
		a.Spec.Tools.A2AAgents = []sessionsv1alpha1.A2AAgent{{Name: "peer", URL: base + "/a2a/" + ns + "/" + next, Headers: authorization}}
		return a
	}
}

// mcpPeer is an agent whose MCP server "door" is /mcp of its namespace, and which sends
// the next agent's main session every input through its sessions_send, fire-and-forget.
func mcpPeer(ns, _, next string) *sessionsv1alpha1.Agent {
	a := callsOnAnyInput("mcp__door__sessions_send", map[string]any{"sessionKey": sessionkey.MainKey(next), "message": "{{input}}", "timeoutSeconds": 0})
	a.Spec.Tools.MCPServers = []sessionsv1alpha1.MCPServer{{Name: "door", URL: doors + "/mcp?namespace=" + ns, Headers: authorization}}
	return a
}

// expectStoppedAcrossWire checks a finished storm whose sends went through the doors: every
// send but the seed arrived carrying the seed's chain, the count is within the bound the
// same ring has in one cluster, the model was told the limit and that the chain crossed
// the wire, and the seed got one Event naming the limit.
func expectStoppedAcrossWire(name string, seed *sessionsv1alpha1.SessionSend, sends []sessionsv1alpha1.SessionSend, bound int, limit string) {
	GinkgoWriter.Printf("%s: %d SessionSends when it stopped (limit %d)\n", name, len(sends), bound)
	AddReportEntry(name, fmt.Sprintf("%d SessionSends", len(sends)))
	Expect(len(sends)).To(BeNumerically("<=", bound))
	Expect(len(sends)).To(BeNumerically(">", 2), "the storm never crossed the wire twice")
	for _, s := range sends {
		if s.Name == seed.Name {
			continue
		}
		c, err := policy.CarriedOf(s.Annotations)
		Expect(err).NotTo(HaveOccurred())
		Expect(c).NotTo(BeNil(), "send %s carries no chain", s.Name)
		Expect(c.ID).To(Equal(string(seed.UID)), "send %s", s.Name)
	}
	text := replies(sends)
	Expect(text).To(ContainSubstring("chain limit reached:"))
	Expect(text).To(ContainSubstring("spec.limits." + limit))
	Expect(text).To(ContainSubstring("crossed the wire"))
	Eventually(func(g Gomega) {
		g.Expect(chainEvents(g, seed)).To(ConsistOf(ContainSubstring("spec.limits." + limit)))
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
}

var _ = Describe("a storm of agents that call each other across the wire", func() {
	It("stops a pair calling each other's /a2a at its second lap", func() {
		seed, sends := stormOf(&sessionsv1alpha1.SessionPolicySpec{}, doorCaller, a2aPeer(doors), "a", "b")
		expectStoppedAcrossWire("A2A pair storm, defaults", seed, sends, 5, "maxPairRepeats")
	})

	It("stops a triangle calling each other's /a2a at its second lap", func() {
		seed, sends := stormOf(&sessionsv1alpha1.SessionPolicySpec{}, doorCaller, a2aPeer(doors), "a", "b", "c")
		expectStoppedAcrossWire("A2A triangle storm, defaults", seed, sends, 7, "maxPairRepeats")
	})

	It("stops a pair sending each other through /mcp sessions_send at its second lap", func() {
		seed, sends := stormOf(&sessionsv1alpha1.SessionPolicySpec{}, doorCaller, mcpPeer, "a", "b")
		expectStoppedAcrossWire("MCP pair storm, defaults", seed, sends, 5, "maxPairRepeats")
	})

	It("stops an A2A pair at maxHops counted on both sides when pairs may repeat", func() {
		seed, sends := stormOf(&sessionsv1alpha1.SessionPolicySpec{Limits: &sessionsv1alpha1.ChainLimits{MaxPairRepeats: ptr.To[int32](1000), MaxHops: ptr.To[int32](4)}},
			doorCaller, a2aPeer(doors), "a", "b")
		expectStoppedAcrossWire("A2A pair storm, maxHops 4", seed, sends, 5, "maxHops")
	})
})

// sendText is what a send's turns replied, for a message that names what stopped them.
func sendText(s *sessionsv1alpha1.SessionSend) string {
	var b strings.Builder
	b.WriteString(s.Status.Reply + "\n" + s.Status.Error)
	for _, t := range s.Status.Turns {
		b.WriteString("\n" + t.Reply)
	}
	return b.String()
}
