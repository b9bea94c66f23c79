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
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
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
	return []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: tokenSecret, Namespace: ns,
		Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
		StringData: map[string]string{"authorization": "Bearer " + tokenOf(ns, "caller")}}}
}

// tokenOf makes the ServiceAccount sa of ns, allowed everything in ns, and returns a token
// of it for the doors' audience.
func tokenOf(ns, sa string) string {
	Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}})).To(Succeed())
	Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}})).To(Succeed())
	cs, err := kubernetes.NewForConfig(suite.Config)
	Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{audience}}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
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

// sendA2A sends "hi" to agent q of ns through /a2a as token (A2A 1.0 JSON-RPC, returning at
// once), carrying chain in the message's metadata when not nil, and returns the answer.
func sendA2A(ns, token string, chain any) string {
	msg := map[string]any{"messageId": string(uuid.NewUUID()), "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}
	if chain != nil {
		msg["metadata"] = map[string]any{policy.ChainExtensionURI: chain}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
		"params": map[string]any{"message": msg, "configuration": map[string]any{"returnImmediately": true}}})
	Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, doors+"/a2a/"+ns+"/q", bytes.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(a2a.SvcParamVersion, string(a2a.Version))
	req.Header.Set(a2a.SvcParamExtensions, policy.ChainExtensionURI)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test sidecar's own certificate
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.Header.Get(a2a.SvcParamExtensions)).To(Equal(policy.ChainExtensionURI), "the door did not activate the extension")
	return string(out)
}

var _ = Describe("what a caller carries to the doors", func() {
	It("only narrows: omitted or mangled starts a new chain, and another caller's chain id stops nothing of that chain", func() {
		ns := ringOf(&sessionsv1alpha1.SessionPolicySpec{}, doorCaller, a2aPeer(doors), "a", "b")
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: ns},
			Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted,
				Script: []sessionsv1alpha1.ScriptRule{{Match: "^", Reply: "noted"}}}}})).To(Succeed())
		forger := tokenOf(ns, "forger")
		seed := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "seed", Namespace: ns},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: sessionkey.MainKey("a"), Message: "go", TimeoutSeconds: ptr.To[int32](0)}}
		Expect(k8s.Create(ctx, seed)).To(Succeed())
		id := string(seed.UID)
		pair := policy.PairHash(id, "x", "y")

		// While the seed's chain runs, another caller names it: claims at its limits are its
		// own sends' refusals, nothing of the seed's.
		Expect(sendA2A(ns, forger, map[string]any{"id": id, "hops": 1, "sends": 20, "root": "SessionSend/seed"})).
			To(ContainSubstring("spec.limits.maxSendsPerChain"))
		Expect(sendA2A(ns, forger, map[string]any{"id": id, "hops": 5, "sends": 5, "visited": []string{pair, pair, pair}})).
			To(ContainSubstring("spec.limits.maxPairRepeats"))
		Expect(sendA2A(ns, forger, map[string]any{"id": id, "hops": 1, "sends": 1, "root": "SessionSend/seed",
			"seal": "0123456789abcdef0123456789abcdef"})).To(ContainSubstring(`"result"`))
		// Omitted or mangled: a new chain under this namespace's limits.
		Expect(sendA2A(ns, forger, nil)).To(ContainSubstring(`"result"`))
		Expect(sendA2A(ns, forger, map[string]any{"id": "a/b", "hops": -1})).To(ContainSubstring(`"result"`))
		// A larger budget is taken as a claim only: the ledger holds the send to the lesser.
		Expect(sendA2A(ns, forger, map[string]any{"id": "mine", "hops": 1, "sends": 1, "budget": map[string]any{"maxTurns": 1000000}})).
			To(ContainSubstring(`"result"`))

		sends := settle(ns, nil)
		var ring, forged []sessionsv1alpha1.SessionSend
		for _, s := range sends {
			if strings.HasPrefix(s.Spec.SessionKey, "agent:q:") {
				forged = append(forged, s)
			} else {
				ring = append(ring, s)
			}
		}
		Expect(forged).To(HaveLen(4), "the four admitted messages")
		carried := 0
		for _, s := range forged {
			if _, ok := s.Annotations[sessionsv1alpha1.CarriedChainAnnotation]; ok {
				carried++
			}
		}
		Expect(carried).To(Equal(2), "the omitted and the mangled chain start new chains")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(seed), seed)).To(Succeed())
		expectStoppedAcrossWire("A2A pair storm beside a forger", seed, ring, 5, "maxPairRepeats")
		Expect(ring).To(HaveLen(5), "the seed's chain stopped at the lap it stops at alone")
	})
})

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

	It("stops a pair calling each other through a relay that strips the extension at the door backstop", func() {
		relay := stripping()
		_, sends := stormOf(&sessionsv1alpha1.SessionPolicySpec{}, doorCaller, a2aPeer(relay), "a", "b")
		GinkgoWriter.Printf("A2A pair storm through a stripping relay: %d SessionSends when it stopped (limit %d)\n", len(sends), policy.DefaultDoorSendsPerCaller+1)
		AddReportEntry("A2A pair storm through a stripping relay", fmt.Sprintf("%d SessionSends", len(sends)))
		// The seed, then every door-made send the caller (both agents' token) may make in a window.
		Expect(len(sends)).To(BeNumerically("<=", policy.DefaultDoorSendsPerCaller+1))
		Expect(len(sends)).To(BeNumerically(">", 5), "the relay did not strip the chain: the pair limit stopped it")
		for _, s := range sends {
			Expect(s.Annotations).NotTo(HaveKey(sessionsv1alpha1.CarriedChainAnnotation), "send %s", s.Name)
		}
		Expect(replies(sends)).To(ContainSubstring("door limit reached"))
		Expect(replies(sends)).To(ContainSubstring("spec.limits.doorSendsPerCaller"))
	})

	It("stops a run tree delegating over A2A at its perRun budget, counting both sides' turns", func() {
		ns := ringOf(&sessionsv1alpha1.SessionPolicySpec{
			Limits:  &sessionsv1alpha1.ChainLimits{MaxPairRepeats: ptr.To[int32](1000)},
			Budgets: &sessionsv1alpha1.Budgets{PerRun: &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](4)}}}},
			doorCaller, a2aPeer(doors), "a", "b")
		run := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: ns},
			Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "a", Task: "go"}}
		Expect(k8s.Create(ctx, run)).To(Succeed())
		sends := settle(ns, func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), run)).To(Succeed())
			g.Expect(sessionsv1alpha1.Finished(run.Status.Conditions)).To(BeTrue(), "run still running")
		})
		turns := int64(0)
		if run.Status.Usage != nil {
			turns = run.Status.Usage.Turns
		}
		for _, s := range sends {
			Expect(s.Annotations).To(HaveKey(sessionsv1alpha1.CarriedChainAnnotation), "send %s", s.Name)
			if s.Status.Usage != nil {
				turns += s.Status.Usage.Turns
			}
		}
		GinkgoWriter.Printf("run tree over A2A, perRun maxTurns 4: %d turns on both sides, %d door-made sends\n", turns, len(sends))
		AddReportEntry("run tree over A2A, perRun maxTurns 4", fmt.Sprintf("%d turns, %d sends", turns, len(sends)))
		Expect(turns).To(BeNumerically("<=", 4))
		Expect(sends).To(HaveLen(3), "the run's turn and three door-made sends' turns make its four")
		Expect(replies(sends)).To(ContainSubstring("budget exceeded: the budget above this chain has no turn left"))
		Expect(replies(sends)).To(ContainSubstring("crossed the wire"))
	})

	It("stops an A2A pair at maxHops counted on both sides when pairs may repeat", func() {
		seed, sends := stormOf(&sessionsv1alpha1.SessionPolicySpec{Limits: &sessionsv1alpha1.ChainLimits{MaxPairRepeats: ptr.To[int32](1000), MaxHops: ptr.To[int32](4)}},
			doorCaller, a2aPeer(doors), "a", "b")
		expectStoppedAcrossWire("A2A pair storm, maxHops 4", seed, sends, 5, "maxHops")
	})
})

// stripping is an A2A peer in front of the doors that forwards everything but the chain
// extension (the header asking for it, the value in a message's metadata), as a third-party
// agent server that knows nothing of it would.
func stripping() string {
	u, err := url.Parse(doors)
	Expect(err).NotTo(HaveOccurred())
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the test sidecar's own certificate
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(a2a.SvcParamExtensions)
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = withoutMetadata(body)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	DeferCleanup(srv.Close)
	return srv.URL
}

// withoutMetadata is a JSON-RPC request without its message's metadata.
func withoutMetadata(body []byte) []byte {
	var req map[string]any
	if json.Unmarshal(body, &req) != nil {
		return body
	}
	if p, ok := req["params"].(map[string]any); ok {
		if m, ok := p["message"].(map[string]any); ok {
			delete(m, "metadata")
		}
	}
	out, err := json.Marshal(req)
	if err != nil {
		return body
	}
	return out
}
