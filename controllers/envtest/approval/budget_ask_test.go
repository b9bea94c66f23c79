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

package approval

import (
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// payKey is the session of the pay agent: a scripted model that calls the MCP server's echo
// on "drop" (no rule makes it wait) and then answers, two model calls in one turn.
const payKey = "agent:pay:main"

// newBudgetFixture is the approval fixture with the pay agent and a SessionPolicy whose
// perSend budget of one token asks a person (onExceeded: Ask) for askTimeoutSeconds: the
// first model call of a send passes it, the second waits. perRun puts the budget on each
// run tree instead.
func newBudgetFixture(askTimeoutSeconds int32, perRun ...bool) *fixture {
	f := newFixture(600)
	args, err := json.Marshal(map[string]any{"text": "users"})
	Expect(err).NotTo(HaveOccurred())
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "pay", Namespace: f.ns}, Spec: sessionsv1alpha1.AgentSpec{
		Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
			{Match: "drop", ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: "mcp__everything__echo", Arguments: &runtime.RawExtension{Raw: args}}},
				Reply: "done: {{toolResults}}"},
		}},
		Tools: sessionsv1alpha1.ToolsSpec{MCPServers: []sessionsv1alpha1.MCPServer{{Name: "everything", URL: f.srv.URL}}},
	}}
	Expect(k8s.Create(ctx, agent)).To(Succeed())
	asks := &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](1)}, OnExceeded: sessionsv1alpha1.BudgetAsk,
		AskTimeoutSeconds: ptr.To(askTimeoutSeconds)}
	budgets := &sessionsv1alpha1.Budgets{PerSend: asks}
	if len(perRun) > 0 && perRun[0] {
		budgets = &sessionsv1alpha1.Budgets{PerRun: asks}
	}
	pol := &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: f.ns},
		Spec: sessionsv1alpha1.SessionPolicySpec{Budgets: budgets}}
	Expect(k8s.Create(ctx, pol)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(agent), agent)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(agent.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pol), pol)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(pol.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	createSession(f.ns, payKey, "pay")
	return f
}

func (f *fixture) paySend() *sessionsv1alpha1.SessionSend {
	s := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{GenerateName: "send-", Namespace: f.ns},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: payKey, Message: "drop it", TimeoutSeconds: ptr.To[int32](0)}}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	return s
}

// budgetAsk waits until the send waits on its budget and returns the ask.
func (f *fixture) budgetAsk(s *sessionsv1alpha1.SessionSend) *sessionsv1alpha1.ToolApproval {
	ta := f.waiting(s)
	Expect(ta.Spec.Kind).To(Equal(sessionsv1alpha1.ApprovalKindBudget))
	Expect(ta.Spec.Tool).To(BeEmpty())
	Expect(ta.Spec.Budget).NotTo(BeNil())
	Expect(ta.Spec.Budget.BudgetOf).To(Equal(sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: s.Name}))
	Expect(ta.Spec.Budget.Resource).To(Equal(sessionsv1alpha1.BudgetTokens))
	Expect(ta.Spec.Budget.Limit).To(Equal("1"))
	Expect(ta.Spec.Budget.More).To(Equal("1"))
	Expect(ta.Spec.Budget.Message).To(MatchRegexp(`^send ` + s.Name + ` spent \d+ of 1 tokens; approve to allow 1 more$`))
	Expect(ta.Labels).To(HaveKeyWithValue(sessionsv1alpha1.BudgetHolderLabel, string(s.UID)))
	Expect(ta.OwnerReferences).To(ConsistOf(HaveField("UID", s.UID)))
	c := meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionAwaitingApproval)
	Expect(c.Message).To(HavePrefix("budget: " + ta.Spec.Budget.Message + ": kubectl sessions approve " + ta.Name))
	return ta
}

// eventReasons are the reasons of the Events about obj.
func eventReasons(ns, name string) []string {
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

var _ = Describe("a budget that asks instead of failing", func() {
	It("pauses the send at its budget, and an approval resumes it where it stopped with more", func() {
		f := newBudgetFixture(600)
		s := f.paySend()
		ta := f.budgetAsk(s)
		Expect(f.srv.EchoCalls()).To(Equal(1), "the tool ran before the model call that waits")
		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendAwaitingApproval))
		}, time.Second, testenv.Interval).Should(Succeed())

		Expect(decide(f.carol, ta, sessionsv1alpha1.DecisionApproved, "")).To(Succeed())
		s = f.finished(s)
		Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendCompleted))
		Expect(s.Status.Reply).To(Equal("done: Echo: users"))
		Expect(f.srv.EchoCalls()).To(Equal(1), "the resumed turn did not run its tool again")
		Expect(meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionAwaitingApproval)).To(HaveField("Status", metav1.ConditionFalse))
		Expect(approvalNow(ta).Status.DecidedBy).To(Equal("carol"))
		Eventually(func() []string { return eventReasons(f.ns, s.Name) }, testenv.Timeout, testenv.Interval).
			Should(ContainElements(sessionsv1alpha1.ConditionAwaitingApproval, "BudgetApproved"))
		// The transcript says the turn waited on its budget, and who let it go on, as it says
		// of a tool call's approval.
		Expect(records(f.ns, payKey)).To(ContainElements(
			Equal("system: budget approval asked: "+ta.Spec.Budget.Message+" (ToolApproval "+ta.Name+", expires "+ta.Spec.ExpiresAt.UTC().Format(time.RFC3339)+")"),
			HavePrefix("system: budget approval decided: Approved by carol at "),
			Equal("toolResult: Echo: users"), Equal("assistant: done: Echo: users")))
		Expect(records(f.ns, payKey)).To(HaveEach(Not(HavePrefix("system: budget approval decided: Denied"))))
	})

	It("fails the send as a budget stop when a person denies more", func() {
		f := newBudgetFixture(600)
		s := f.paySend()
		ta := f.budgetAsk(s)
		Expect(decide(f.carol, ta, sessionsv1alpha1.DecisionDenied, "enough for today")).To(Succeed())
		s = f.finished(s)
		Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendFailed))
		Expect(meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionFailed)).To(HaveField("Reason", sessionsv1alpha1.ReasonBudgetExceeded))
		Expect(s.Status.Error).To(MatchRegexp(`^budget exceeded: the send used \d+ tokens of its maxTokens 1; more was denied by carol: enough for today \(toolapproval/` + ta.Name + `\)$`))
		Eventually(func() []string { return eventReasons(f.ns, s.Name) }, testenv.Timeout, testenv.Interval).
			Should(ContainElements("BudgetDenied", sessionsv1alpha1.ReasonBudgetExceeded))
		Eventually(func() []string { return records(f.ns, payKey) }, testenv.Timeout, testenv.Interval).Should(ContainElements(
			HavePrefix("system: budget approval asked: "+ta.Spec.Budget.Message),
			MatchRegexp(`^system: budget approval decided: Denied by carol at \S+: enough for today$`)))
	})

	It("fails the send when nobody decides before the ask expires", func() {
		f := newBudgetFixture(1)
		s := f.paySend()
		ta := f.budgetAsk(s)
		fakeClock.Step(2 * time.Second)
		s = f.finished(s)
		Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendFailed))
		Expect(meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionFailed)).To(HaveField("Reason", sessionsv1alpha1.ReasonBudgetExceeded))
		Expect(s.Status.Error).To(HaveSuffix("; nobody approved more in time (toolapproval/" + ta.Name + " expired)"))
		Expect(approvalNow(ta).Status.Phase).To(Equal(sessionsv1alpha1.ApprovalExpired))
		Eventually(func() []string { return records(f.ns, payKey) }, testenv.Timeout, testenv.Interval).Should(ContainElements(
			HavePrefix("system: budget approval asked: "+ta.Spec.Budget.Message),
			HavePrefix("system: budget approval decided: Expired")))
	})

	It("pauses a run tree at its perRun budget the same way, and the run succeeds once approved", func() {
		f := newBudgetFixture(600, true)
		run := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{GenerateName: "run-", Namespace: f.ns},
			Spec: sessionsv1alpha1.SubagentRunSpec{Task: "drop it", AgentID: "pay"}}
		Expect(k8s.Create(ctx, run)).To(Succeed())
		var ta sessionsv1alpha1.ToolApproval
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), run)).To(Succeed())
			g.Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunAwaitingApproval))
			var list sessionsv1alpha1.ToolApprovalList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(f.ns))).To(Succeed())
			g.Expect(list.Items).To(HaveLen(1))
			ta = list.Items[0]
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(ta.Spec.Kind).To(Equal(sessionsv1alpha1.ApprovalKindBudget))
		Expect(ta.Spec.Budget.BudgetOf).To(Equal(sessionsv1alpha1.ApprovalOwner{Kind: "SubagentRun", Name: run.Name}))
		Expect(ta.Spec.Budget.Message).To(MatchRegexp(`^run tree ` + run.Name + ` spent \d+ of 1 tokens; approve to allow 1 more$`))
		Expect(decide(f.carol, &ta, sessionsv1alpha1.DecisionApproved, "")).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), run)).To(Succeed())
			g.Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(run.Status.Result).To(Equal("done: Echo: users"))
		Expect(f.srv.EchoCalls()).To(Equal(1))
	})
})
