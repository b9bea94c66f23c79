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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// Usage and cost add up where people ask: a send reports all its turns, a session all the
// turns that ran in it, priced with each turn's Agent pricing.
var _ = Describe("usage and cost", func() {
	var ns string
	priced := sessionsv1alpha1.Pricing{InputPerMillion: "3", OutputPerMillion: "15", Currency: "USD"}
	pricedAgent := func(name string, rules ...sessionsv1alpha1.ScriptRule) {
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: rules, Pricing: &priced}}})).To(Succeed())
	}
	// turnsOf adds up the usage of the transcript records of owner's turns (keys <uid>/...).
	turnsOf := func(uid string, sessions ...*sessionsv1alpha1.AgentSession) *sessionsv1alpha1.Usage {
		var u *sessionsv1alpha1.Usage
		for _, s := range sessions {
			for _, r := range allRecords(ns, s) {
				if !strings.HasPrefix(r.IdempotencyKey, uid+"/") {
					continue
				}
				switch {
				case r.Message.Role == transcript.RoleUser:
					u = usage.Add(u, usage.Turn{}) // one turn per input
				case r.Message.Usage != nil:
					mu := r.Message.Usage
					u = usage.Merge(u, &sessionsv1alpha1.Usage{InputTokens: mu.Input, OutputTokens: mu.Output,
						Cost: usage.FormatNanos(mu.CostNanos), Currency: mu.Currency})
				}
			}
		}
		return u
	}
	BeforeEach(func() { ns = newNamespace() })

	It("sums a send's round 1, both sides' ping-pong turns and its announce", func() {
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}, MaxPingPongTurns: ptr.To[int32](2)}})
		pricedAgent("alice")
		pricedAgent("bob", rule("^Agent-to-agent announce step", "all done"))
		alice := createSession(ns, "agent:alice:main", "alice")
		bob := createSession(ns, "agent:bob:main", "bob")

		send := waitSend(createSend(ns, "agent:bob:main", "chat", 30, "agent:alice:main"), completed)
		Expect(send.Status.Turns).To(HaveLen(3))
		u := send.Status.Usage
		Expect(u).NotTo(BeNil())
		Expect(u.Turns).To(Equal(int64(4)), "round 1, two ping-pong turns, the announce")
		Expect(u.Currency).To(Equal("USD"))
		Expect(u.Cost).NotTo(BeEmpty())
		Expect(u).To(Equal(turnsOf(string(send.UID), alice, bob)), "the send's usage is the sum of its turns' records")
	})

	It("gives a session the sum of the sends that ran in it", func() {
		pricedAgent("carol", rule("^Agent-to-agent announce step", sessionsv1alpha1.AnnounceSkip))
		carol := createSession(ns, "agent:carol:main", "carol")
		first := waitSend(createSend(ns, "agent:carol:main", "first question", 30, ""), completed)
		second := waitSend(createSend(ns, "agent:carol:main", "a second, longer question", 30, ""), completed)

		want := usage.Merge(first.Status.Usage.DeepCopy(), second.Status.Usage)
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, keyOf(ns, "agent:carol:main"), carol)).To(Succeed())
			g.Expect(carol.Status.Usage).To(Equal(want))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(carol.Status.Usage.Cost).NotTo(Equal("0"))
	})
})
