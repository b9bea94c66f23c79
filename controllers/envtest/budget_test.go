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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// Budgets at run time: before each model call the turn engine judges what a send, a run tree
// and the namespace's window used, and stops the owner over a limit.
var _ = Describe("budgets", func() {
	var ns string
	priced := sessionsv1alpha1.Pricing{InputPerMillion: "3", OutputPerMillion: "15", Currency: "USD"}
	pricedAgent := func(name string, mut func(*sessionsv1alpha1.Agent), rules ...sessionsv1alpha1.ScriptRule) {
		a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: rules, Pricing: &priced}}}
		if mut != nil {
			mut(a)
		}
		Expect(k8s.Create(ctx, a)).To(Succeed())
	}
	budgetExceeded := func(conds []metav1.Condition) {
		c := meta.FindStatusCondition(conds, sessionsv1alpha1.ConditionFailed)
		Expect(c).NotTo(BeNil(), "no Failed condition")
		Expect(c.Reason).To(Equal(sessionsv1alpha1.ReasonBudgetExceeded))
	}
	BeforeEach(func() { ns = newNamespace() })

	It("stops a send whose ping-pong passes its maxTurns", func() {
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}, MaxPingPongTurns: ptr.To[int32](5)},
			Budgets: &sessionsv1alpha1.Budgets{PerSend: &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](20)}}}})
		pricedAgent("alice", nil)
		pricedAgent("bob", nil)
		createSession(ns, "agent:alice:main", "alice")
		createSession(ns, "agent:bob:main", "bob")
		send := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{GenerateName: "send-", Namespace: ns}, Spec: sessionsv1alpha1.SessionSendSpec{
			SessionKey: "agent:bob:main", Message: "chat", FromSessionKey: "agent:alice:main", Budget: &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](2)}}}
		Expect(k8s.Create(ctx, send)).To(Succeed())

		waitSend(send, completed)
		Expect(send.Status.Phase).To(Equal(sessionsv1alpha1.SendFailed))
		budgetExceeded(send.Status.Conditions)
		Expect(send.Status.Error).To(Equal("budget exceeded: the send would begin turn 3, over its maxTurns 2"))
		Expect(send.Status.Turns).To(HaveLen(3), "round 1, round 2, and round 3 stopped before its model call")
		Expect(send.Status.Turns[2].Error).To(ContainSubstring("budget exceeded"))
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendOK), "round 1 replied: the requester has its answer")
		Expect(send.Status.Announce).To(BeNil(), "a stopped send does not announce")
	})

	It("stops a run tree three deep that passes its maxTokens, and the run still announces", func() {
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{})
		deep := func(a *sessionsv1alpha1.Agent) { a.Spec.Subagents.MaxSpawnDepth = ptr.To[int32](3) }
		pricedAgent("main", nil, rule("^Sub-agent announce step", sessionsv1alpha1.AnnounceSkip))
		pricedAgent("worker", deep, rule("^Sub-agent announce step", sessionsv1alpha1.AnnounceSkip))
		createSession(ns, "agent:main:main", "main")

		// r1's tree may use 2000 tokens: r1 uses a few hundred, r2 (a task of 8000 bytes,
		// echoed) some 4000, so r3's first model call finds the tree over its budget.
		r1 := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: ns}, Spec: sessionsv1alpha1.SubagentRunSpec{
			Task: "hi", AgentID: "worker", RequesterSessionKey: "agent:main:main", Budget: &sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](2000)}}}
		Expect(k8s.Create(ctx, r1)).To(Succeed())
		waitRun(r1, runCompleted)
		Expect(r1.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))
		r2 := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: strings.Repeat("research ", 900), AgentID: "worker",
			RequesterSessionKey: r1.Status.ChildSessionKey}), runCompleted)
		Expect(r2.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))
		r3 := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "dig deeper", AgentID: "worker",
			RequesterSessionKey: r2.Status.ChildSessionKey}), runCompleted)

		Expect(r3.Status.Phase).To(Equal(sessionsv1alpha1.RunFailed))
		budgetExceeded(r3.Status.Conditions)
		Expect(r3.Status.Notes).To(MatchRegexp(`^budget exceeded: the run tree of subagentrun/r1 used \d+ tokens of its maxTokens 2000$`))
		Expect(r3.Status.Stats).NotTo(BeNil())
		var requester sessionsv1alpha1.AgentSession
		Expect(k8s.Get(ctx, keyOf(ns, r2.Status.ChildSessionKey), &requester)).To(Succeed())
		var announce string
		for _, r := range messages(ns, &requester) {
			if r.Message.Provenance != nil && r.Message.Provenance.Kind == transcript.ProvenanceSubagentAnnounce {
				announce = r.Message.Content[0].Text
			}
		}
		Expect(announce).To(ContainSubstring("\nStatus: budget exceeded\n"))
		Expect(announce).To(ContainSubstring("\nStats: runtime "))
	})

	It("keeps the window's spend in the SessionPolicy across a manager restart, and stops work once it is spent", func() {
		window := metav1.Duration{Duration: 8760 * time.Hour}
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Budgets: &sessionsv1alpha1.Budgets{Namespace: &sessionsv1alpha1.NamespaceBudget{Window: window, MaxTokens: ptr.To[int64](1000000000)}}})
		pricedAgent("carol", nil)
		createSession(ns, "agent:carol:main", "carol")
		spend := func(g Gomega) *sessionsv1alpha1.Spend {
			p := &sessionsv1alpha1.SessionPolicy{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, p)).To(Succeed())
			g.Expect(p.Status.Spend).NotTo(BeNil())
			return p.Status.Spend
		}
		tokens := func(s *sessionsv1alpha1.SessionSend) int64 {
			return s.Status.Usage.InputTokens + s.Status.Usage.OutputTokens
		}
		cost := func(sends ...*sessionsv1alpha1.SessionSend) string {
			var u *sessionsv1alpha1.Usage
			for _, s := range sends {
				u = usage.Merge(u, s.Status.Usage)
			}
			return u.Cost
		}

		first := waitSend(createSend(ns, "agent:carol:main", "first question", 30, ""), completed)
		Eventually(func(g Gomega) {
			s := spend(g)
			g.Expect(s.Tokens).To(Equal(tokens(first)))
			g.Expect(s.Cost).To(Equal(cost(first)))
			g.Expect(s.WindowStart.Time.Equal(usage.WindowStart(fakeClock.Now(), window.Duration))).To(BeTrue())
		}, testenv.Timeout, testenv.Interval).Should(Succeed())

		stopManager()
		startManager()

		second := waitSend(createSend(ns, "agent:carol:main", "a second question", 30, ""), completed)
		var spent int64
		Eventually(func(g Gomega) {
			s := spend(g)
			g.Expect(s.Tokens).To(Equal(tokens(first)+tokens(second)), "the restarted manager goes on from the recorded spend")
			g.Expect(s.Cost).To(Equal(cost(first, second)))
			spent = s.Tokens
		}, testenv.Timeout, testenv.Interval).Should(Succeed())

		By("a window spent to its limit stops the next turn before its model call")
		p := &sessionsv1alpha1.SessionPolicy{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, p)).To(Succeed())
		p.Spec.Budgets.Namespace.MaxTokens = ptr.To(spent)
		Expect(k8s.Update(ctx, p)).To(Succeed())
		Eventually(func(g Gomega) {
			third := waitSend(createSend(ns, "agent:carol:main", "a third question", 30, ""), completed)
			g.Expect(third.Status.Phase).To(Equal(sessionsv1alpha1.SendFailed))
			g.Expect(third.Status.Error).To(HavePrefix("namespace budget spent: the namespace's turns used"))
			g.Expect(meta.FindStatusCondition(third.Status.Conditions, sessionsv1alpha1.ConditionFailed).Reason).To(Equal(sessionsv1alpha1.ReasonBudgetExceeded))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})
})
