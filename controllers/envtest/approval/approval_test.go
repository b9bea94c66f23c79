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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools/mcptest"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

const sessionKey = "agent:ops:main"

// The creationTimestamps the controllers read are wall time: the fake clock starts there.
var _ = BeforeEach(func() { fakeClock.SetTime(time.Now()) })

// fixture is one namespace with the ops agent (a scripted model that calls the MCP server's
// echo on "drop" and answers "ping" with "pong"), its main session and an approver, carol.
type fixture struct {
	ns    string
	srv   *mcptest.Server
	carol client.Client
}

func newFixture(timeoutSeconds int32) *fixture {
	f := &fixture{srv: mcptest.NewAt(false, mcpHost+":0")}
	DeferCleanup(f.srv.Close)
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "approval-"}}
	Expect(k8s.Create(ctx, n)).To(Succeed())
	f.ns = n.Name
	shippedRoles()
	f.carol = userClient("carol")
	Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "carol-approves", Namespace: f.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "agent-sessions-approver"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"}},
	})).To(Succeed())
	args, err := json.Marshal(map[string]any{"text": "users"})
	Expect(err).NotTo(HaveOccurred())
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "ops", Namespace: f.ns}, Spec: sessionsv1alpha1.AgentSpec{
		Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
			{Match: "drop", ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: "mcp__everything__echo", Arguments: &runtime.RawExtension{Raw: args}}},
				Reply: "done: {{toolResults}}"},
			{Match: "ping", Reply: "pong"},
		}},
		Tools: sessionsv1alpha1.ToolsSpec{MCPServers: []sessionsv1alpha1.MCPServer{{Name: "everything", URL: f.srv.URL}},
			Approval: &sessionsv1alpha1.ApprovalPolicy{Rules: []sessionsv1alpha1.ToolApprovalRule{{Tools: []string{"mcp__everything__*"}, Action: sessionsv1alpha1.ApprovalRequire,
				TimeoutSeconds: ptr.To(timeoutSeconds)}}}},
	}}
	Expect(k8s.Create(ctx, agent)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(agent), agent)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(agent.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	createSession(f.ns, sessionKey, "ops")
	return f
}

func (f *fixture) send(message string) *sessionsv1alpha1.SessionSend {
	s := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{GenerateName: "send-", Namespace: f.ns},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: sessionKey, Message: message, TimeoutSeconds: ptr.To[int32](0)}}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	return s
}

// waiting waits until the send shows it waits for approval and returns the approval.
func (f *fixture) waiting(s *sessionsv1alpha1.SessionSend) *sessionsv1alpha1.ToolApproval {
	var ta *sessionsv1alpha1.ToolApproval
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendAwaitingApproval))
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionAwaitingApproval)).To(BeTrue())
		ta = f.approvalOf(g, s)
		g.Expect(ta.Status.Phase).To(Equal(sessionsv1alpha1.ApprovalPending))
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	return ta
}

func (f *fixture) approvalOf(g Gomega, s *sessionsv1alpha1.SessionSend) *sessionsv1alpha1.ToolApproval {
	var list sessionsv1alpha1.ToolApprovalList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(f.ns))).To(Succeed())
	var mine []sessionsv1alpha1.ToolApproval
	for _, ta := range list.Items {
		if ta.Spec.Owner.Name == s.Name {
			mine = append(mine, ta)
		}
	}
	g.Expect(mine).To(HaveLen(1))
	return &mine[0]
}

// decide sets the decision as c, through the webhooks.
func decide(c client.Client, ta *sessionsv1alpha1.ToolApproval, d sessionsv1alpha1.ApprovalDecision, reason string) error {
	cur := &sessionsv1alpha1.ToolApproval{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ta), cur); err != nil {
		return err
	}
	cur.Spec.Decision, cur.Spec.Reason = d, reason
	return c.Update(ctx, cur)
}

func (f *fixture) finished(s *sessionsv1alpha1.SessionSend) *sessionsv1alpha1.SessionSend {
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.CompletedAt).NotTo(BeNil())
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	return s
}

func approvalNow(ta *sessionsv1alpha1.ToolApproval) *sessionsv1alpha1.ToolApproval {
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ta), ta)).To(Succeed())
	return ta
}

// transcriptTexts are the session's records as "<role>: <text>", tool records included.
func (f *fixture) transcriptTexts() []string { return records(f.ns, sessionKey) }

// approvals is agent_sessions_tool_approvals_total of a namespace and outcome, as the
// manager's metrics endpoint would serve it.
func approvals(ns, outcome string) float64 {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "agent_sessions_tool_approvals_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

var _ = Describe("a tool call that needs approval", func() {
	It("waits, runs once when a person approves, and the transcript says who", func() {
		f := newFixture(600)
		s := f.send("drop the users table")
		ta := f.waiting(s)
		Expect(ta.Spec.Tool).To(Equal("mcp__everything__echo"))
		Expect(ta.Spec.Arguments).To(MatchJSON(`{"text":"users"}`))
		Expect(ta.Spec.Owner).To(Equal(sessionsv1alpha1.ApprovalOwner{Kind: turns.OwnerSessionSend, Name: s.Name}))
		Expect(ta.OwnerReferences).To(ConsistOf(HaveField("UID", s.UID)))
		Consistently(f.srv.EchoCalls, time.Second, testenv.Interval).Should(BeZero())

		Expect(decide(f.carol, ta, sessionsv1alpha1.DecisionApproved, "")).To(Succeed())
		s = f.finished(s)
		Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendCompleted))
		Expect(s.Status.Reply).To(Equal("done: Echo: users"))
		Expect(meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionAwaitingApproval)).To(HaveField("Status", metav1.ConditionFalse))
		Expect(f.srv.EchoCalls()).To(Equal(1))
		ta = approvalNow(ta)
		Expect(ta.Status.Phase).To(Equal(sessionsv1alpha1.ApprovalApproved))
		Expect(ta.Status.DecidedBy).To(Equal("carol"))
		Expect(ta.Status.DecidedAt).NotTo(BeNil())
		Expect(meta.IsStatusConditionTrue(ta.Status.Conditions, sessionsv1alpha1.ConditionDecided)).To(BeTrue())
		Expect(approvals(f.ns, "requested")).To(Equal(1.0))
		Expect(approvals(f.ns, "approved")).To(Equal(1.0))
		Expect(f.transcriptTexts()).To(ContainElements(
			HavePrefix("system: approval asked: mcp__everything__echo {\"text\":\"users\"}"),
			HavePrefix("system: approval decided: Approved by carol at "),
			Equal("toolResult: Echo: users"),
			Equal("assistant: done: Echo: users")))
	})

	It("asks the session's chat through its webhook sink", func() {
		f := newFixture(600)
		Expect(k8s.Create(ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: f.ns},
			Spec: sessionsv1alpha1.SessionPolicySpec{Delivery: []sessionsv1alpha1.DeliverySink{{Channel: "webchat", URL: sink.URL}}}})).To(Succeed())
		sess := &sessionsv1alpha1.AgentSession{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: sessionkey.ObjectName(sessionKey)}, sess)).To(Succeed())
		sess.Spec.Channel = "webchat"
		Expect(k8s.Update(ctx, sess)).To(Succeed())
		Eventually(func(g Gomega) {
			p := &sessionsv1alpha1.SessionPolicy{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: "default"}, p)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		ta := f.waiting(f.send("drop it"))
		Eventually(func(g Gomega) {
			var mine []delivery.Message
			for _, m := range posted() {
				if m.Namespace == f.ns {
					mine = append(mine, m)
				}
			}
			g.Expect(mine).To(ConsistOf(And(
				HaveField("Type", delivery.TypeApprovalRequested),
				HaveField("Channel", "webchat"),
				HaveField("Approval.Name", ta.Name),
				HaveField("Approval.Tool", "mcp__everything__echo"),
				HaveField("Approval.Arguments", MatchJSON(`{"text":"users"}`)),
				HaveField("Text", And(ContainSubstring(ta.Name), Not(ContainSubstring("http")))))))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})

	It("gives the model the denial with its reason, and the send completes", func() {
		f := newFixture(600)
		s := f.send("drop it")
		ta := f.waiting(s)
		Expect(decide(f.carol, ta, sessionsv1alpha1.DecisionDenied, "not on prod")).To(Succeed())
		s = f.finished(s)
		Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendCompleted))
		Expect(s.Status.Reply).To(ContainSubstring("denied: not on prod"))
		Expect(f.srv.EchoCalls()).To(BeZero())
		Expect(approvalNow(ta).Status.DecidedBy).To(Equal("carol"))
	})

	It("expires at its timeout: the model hears it expired, the tool never runs", func() {
		f := newFixture(1)
		s := f.send("drop it")
		ta := f.waiting(s)
		fakeClock.Step(2 * time.Second)
		s = f.finished(s)
		Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendCompleted))
		Expect(s.Status.Reply).To(ContainSubstring("expired"))
		Expect(f.srv.EchoCalls()).To(BeZero())
		ta = approvalNow(ta)
		Expect(ta.Status.Phase).To(Equal(sessionsv1alpha1.ApprovalExpired))
		Expect(ta.Status.DecidedBy).To(BeEmpty())
		Expect(meta.FindStatusCondition(ta.Status.Conditions, sessionsv1alpha1.ConditionDecided)).To(HaveField("Reason", "Timeout"))
		Expect(approvals(f.ns, "expired")).To(Equal(1.0))
	})

	It("reports timeout to a timed send that still waits, and the run goes on", func() {
		f := newFixture(600)
		s := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{GenerateName: "send-", Namespace: f.ns},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: sessionKey, Message: "drop it", TimeoutSeconds: ptr.To[int32](1)}}
		Expect(k8s.Create(ctx, s)).To(Succeed())
		ta := f.waiting(s)
		fakeClock.Step(2 * time.Second)
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(s.Status.Status).To(Equal(sessionsv1alpha1.SendTimeout))
			g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendAwaitingApproval))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(decide(f.carol, ta, sessionsv1alpha1.DecisionApproved, "")).To(Succeed())
		s = f.finished(s)
		Expect(s.Status.Status).To(Equal(sessionsv1alpha1.SendTimeout))
		Expect(s.Status.Turns).To(ConsistOf(HaveField("Reply", "done: Echo: users")))
	})

	It("expires when its send is cancelled", func() {
		f := newFixture(600)
		s := f.send("drop it")
		ta := f.waiting(s)
		Expect(k8s.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ta), ta)).To(Succeed())
			g.Expect(ta.Status.Phase).To(Equal(sessionsv1alpha1.ApprovalExpired))
			g.Expect(meta.FindStatusCondition(ta.Status.Conditions, sessionsv1alpha1.ConditionDecided)).To(HaveField("Reason", "OwnerEnded"))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		err := decide(f.carol, ta, sessionsv1alpha1.DecisionApproved, "")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("already Expired"))
		Expect(f.srv.EchoCalls()).To(BeZero())
	})

	It("survives a manager restart while waiting, and runs the call once", func() {
		f := newFixture(600)
		s := f.send("drop it")
		ta := f.waiting(s)
		stopManager()
		startManager()
		Expect(decide(f.carol, ta, sessionsv1alpha1.DecisionApproved, "after the restart")).To(Succeed())
		s = f.finished(s)
		Expect(s.Status.Reply).To(Equal("done: Echo: users"))
		Expect(f.srv.EchoCalls()).To(Equal(1))
		var list sessionsv1alpha1.ToolApprovalList
		Expect(k8s.List(ctx, &list, client.InNamespace(f.ns))).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
	})

	It("waits the same way in a sub-agent's run, which shows it", func() {
		f := newFixture(600)
		run := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{GenerateName: "run-", Namespace: f.ns},
			Spec: sessionsv1alpha1.SubagentRunSpec{Task: "drop it", AgentID: "ops"}}
		Expect(k8s.Create(ctx, run)).To(Succeed())
		var ta sessionsv1alpha1.ToolApproval
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), run)).To(Succeed())
			g.Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunAwaitingApproval))
			g.Expect(meta.IsStatusConditionTrue(run.Status.Conditions, sessionsv1alpha1.ConditionAwaitingApproval)).To(BeTrue())
			var list sessionsv1alpha1.ToolApprovalList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(f.ns))).To(Succeed())
			g.Expect(list.Items).To(HaveLen(1))
			ta = list.Items[0]
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(ta.Spec.Owner).To(Equal(sessionsv1alpha1.ApprovalOwner{Kind: turns.OwnerSubagentRun, Name: run.Name}))
		Expect(ta.Spec.SessionKey).To(Equal(run.Status.ChildSessionKey))
		Expect(decide(f.carol, &ta, sessionsv1alpha1.DecisionApproved, "")).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), run)).To(Succeed())
			g.Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(run.Status.Result).To(Equal("done: Echo: users"))
		Expect(f.srv.EchoCalls()).To(Equal(1))
	})

	It("holds no executor slot: 500 waiting turns do not stop an unrelated send", func() {
		const waiting = 500
		f := newFixture(600)
		sends := make([]*sessionsv1alpha1.SessionSend, waiting)
		for i := range sends {
			sends[i] = f.send(fmt.Sprintf("drop table %d", i))
		}
		// Far more turns than the engine's slots (maxTurns) wait at once.
		Eventually(func(g Gomega) {
			var list sessionsv1alpha1.ToolApprovalList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(f.ns))).To(Succeed())
			pending := 0
			for _, ta := range list.Items {
				if ta.Status.Phase == sessionsv1alpha1.ApprovalPending {
					pending++
				}
			}
			g.Expect(pending).To(Equal(waiting))
		}, 5*testenv.Timeout, testenv.Interval).Should(Succeed())
		other := f.finished(f.send("ping"))
		Expect(other.Status.Reply).To(Equal("pong"))
		Expect(f.srv.EchoCalls()).To(BeZero())
	})
})

// userClient provisions a user with a client certificate.
func userClient(name string) client.Client {
	c, err := testenv.UserClient(env, cfg, name)
	Expect(err).NotTo(HaveOccurred())
	return c
}

// shippedRoles creates the ClusterRoles of config/rbac/user_roles.yaml as shipped.
func shippedRoles() { Expect(testenv.ShippedRoles(ctx, k8s)).To(Succeed()) }
