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
	"io"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

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
		ns := storms.RingOf(&sessionsv1alpha1.SessionPolicySpec{}, storms.DoorCaller, A2APeer(doors), "a", "b")
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: ns},
			Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted,
				Script: []sessionsv1alpha1.ScriptRule{{Match: "^", Reply: "noted"}}}}})).To(Succeed())
		forger := storms.TokenOf(ns, "forger")
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

		sends := storms.Settle(ns, nil)
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
		storms.ExpectStoppedAcrossWire("A2A pair storm beside a forger", seed, ring, 5, "maxPairRepeats")
		Expect(ring).To(HaveLen(5), "the seed's chain stopped at the lap it stops at alone")
	})
})

var _ = Describe("a storm of agents that call each other across the wire", func() {
	It("stops a pair calling each other's /a2a at its second lap", func() {
		seed, sends := storms.StormOf(&sessionsv1alpha1.SessionPolicySpec{}, storms.DoorCaller, A2APeer(doors), "a", "b")
		storms.ExpectStoppedAcrossWire("A2A pair storm, defaults", seed, sends, 5, "maxPairRepeats")
	})

	It("stops a triangle calling each other's /a2a at its second lap", func() {
		seed, sends := storms.StormOf(&sessionsv1alpha1.SessionPolicySpec{}, storms.DoorCaller, A2APeer(doors), "a", "b", "c")
		storms.ExpectStoppedAcrossWire("A2A triangle storm, defaults", seed, sends, 7, "maxPairRepeats")
	})

	It("stops a pair sending each other through /mcp sessions_send at its second lap", func() {
		seed, sends := storms.StormOf(&sessionsv1alpha1.SessionPolicySpec{}, storms.DoorCaller, storms.MCPPeer, "a", "b")
		storms.ExpectStoppedAcrossWire("MCP pair storm, defaults", seed, sends, 5, "maxPairRepeats")
	})

	It("stops a pair calling each other through a relay that strips the extension at the door backstop", func() {
		relay := storms.StrippingRelay(nil, &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}) //nolint:gosec // the test sidecar's own certificate
		_, sends := storms.StormOf(&sessionsv1alpha1.SessionPolicySpec{}, storms.DoorCaller, A2APeer(relay), "a", "b")
		ExpectStoppedAtBackstop("A2A pair storm through a stripping relay", sends)
	})

	It("stops a run tree delegating over A2A at its perRun budget, counting both sides' turns", func() {
		_, _, sends := storms.RunTreeOverA2A(doors, 4)
		Expect(sends).To(HaveLen(3), "the run's turn and three door-made sends' turns make its four")
	})

	It("stops an A2A pair at maxHops counted on both sides when pairs may repeat", func() {
		seed, sends := storms.StormOf(&sessionsv1alpha1.SessionPolicySpec{Limits: &sessionsv1alpha1.ChainLimits{MaxPairRepeats: ptr.To[int32](1000), MaxHops: ptr.To[int32](4)}},
			storms.DoorCaller, A2APeer(doors), "a", "b")
		storms.ExpectStoppedAcrossWire("A2A pair storm, maxHops 4", seed, sends, 5, "maxHops")
	})
})
