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
	"github.com/agent-sessions/agent-session-operator/controllers/announce"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

var announceSkip = rule("^Agent-to-agent announce step", sessionsv1alpha1.AnnounceSkip)

var _ = Describe("SessionSend", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("replies ok within the timeout, in two API writes with the create, and records every step", func() {
		createAgent(ns, "bob", announceSkip, rule("^ping", "pong"))
		bob := createSession(ns, "agent:bob:main", "bob")
		before := writesTo("sessionsends")
		send := waitSend(createSend(ns, "agent:bob:main", "ping", 30, ""), completed)

		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendOK))
		Expect(send.Status.Reply).To(Equal("pong"))
		Expect(send.Status.Phase).To(Equal(sessionsv1alpha1.SendCompleted))
		Expect(send.Status.RunID).To(Equal(string(send.UID) + "/round-1"))
		Expect(send.Status.Turns).To(Equal([]sessionsv1alpha1.SendTurn{{Round: 1, Session: "agent:bob:main", Reply: "pong"}}))
		Expect(send.Status.Announce).To(BeNil(), "the announce step is agent-to-agent: a person's send has none")
		Expect(meta.IsStatusConditionTrue(send.Status.Conditions, sessionsv1alpha1.ConditionReplied)).To(BeTrue())
		Expect(meta.IsStatusConditionTrue(send.Status.Conditions, sessionsv1alpha1.ConditionCompleted)).To(BeTrue())
		for _, c := range send.Status.Conditions {
			Expect(c.Message).To(BeEmpty(), "%s: a success's reason says it; every finished send carries its conditions", c.Type)
		}
		// The client's create plus the manager's one status write.
		Expect(1 + writesTo("sessionsends") - before).To(BeNumerically("<=", 2))

		recs := messages(ns, bob)
		Expect(texts(recs)).To(Equal([]string{"user: ping", "assistant: pong"}))
		Expect(recs[0].Message.Provenance).To(Equal(&transcript.Provenance{Kind: transcript.ProvenanceExternal, SourceTool: "sessions_send"}))
	})

	It("accepts a fire-and-forget send at once and still records the reply", func() {
		createAgent(ns, "bob", announceSkip)
		createSession(ns, "agent:bob:main", "bob")
		send := waitSend(createSend(ns, "agent:bob:main", "note this", 0, ""), completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendAccepted))
		Expect(send.Status.Turns[0].Reply).To(Equal("echo: note this"))
		// Its plain completion is the condition, not an Event (an API write per send).
		Eventually(func(g Gomega) []string { return eventsOf(g, send) }, testenv.Timeout, testenv.Interval).Should(ConsistOf(
			"sessionsend-controller Normal/Accepted"))
	})

	It("reports error when the run fails", func() {
		createSession(ns, "agent:ghost:main", "ghost")
		send := waitSend(createSend(ns, "agent:ghost:main", "anyone?", 30, ""), completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendError))
		Expect(send.Status.Phase).To(Equal(sessionsv1alpha1.SendFailed))
		Expect(meta.IsStatusConditionTrue(send.Status.Conditions, sessionsv1alpha1.ConditionFailed)).To(BeTrue())
		Expect(meta.FindStatusCondition(send.Status.Conditions, sessionsv1alpha1.ConditionCompleted)).To(BeNil(),
			"kubectl wait --for=condition=Completed must not return on a failure")
		Expect(send.Status.Error).To(ContainSubstring(`agent "ghost" not found`))
		Eventually(func(g Gomega) []string { return eventsOf(g, send) }, testenv.Timeout, testenv.Interval).Should(
			ContainElement("sessionsend-controller Warning/RunFailed"))
	})

	It("fails clearly for a target that does not exist", func() {
		send := waitSend(createSend(ns, "agent:bob:discord:group:nope", "hi", 30, ""), completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendError))
		Expect(send.Status.Error).To(ContainSubstring(`target session "agent:bob:discord:group:nope" not found`))
	})

	It("creates an agent's main session on first send", func() {
		createAgent(ns, "helper", announceSkip)
		send := waitSend(createSend(ns, "agent:helper:main", "hello", 30, ""), completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendOK))
		Expect(send.TargetKey()).To(Equal("agent:helper:main"))
		Expect(send.Status.TargetSessionKey).To(BeEmpty(), "spec.sessionKey is the key: the status does not repeat it")
	})

	It("reports timeout at the deadline and still records the late reply", func() {
		// The delay stays under the agent's default turn timeout (10 minutes).
		createAgent(ns, "slowpoke", announceSkip, sessionsv1alpha1.ScriptRule{Match: "^slow", Reply: "finally", Delay: &metav1.Duration{Duration: 5 * time.Minute}})
		slow := createSession(ns, "agent:slowpoke:main", "slowpoke")
		send := createSend(ns, "agent:slowpoke:main", "slow question", 5, "")
		Eventually(func() int { return len(messages(ns, slow)) }, "60s", "50ms").Should(Equal(1)) // the input is in; the model waits
		fakeClock.Step(time.Minute)
		touch(send)
		waitSend(send, func(g Gomega, s *sessionsv1alpha1.SessionSend) {
			g.Expect(s.Status.Status).To(Equal(sessionsv1alpha1.SendTimeout))
		})
		Expect(send.Status.Error).To(ContainSubstring("no reply within 5s"))
		Expect(meta.IsStatusConditionFalse(send.Status.Conditions, sessionsv1alpha1.ConditionReplied)).To(BeTrue())

		fakeClock.Step(5 * time.Minute)
		waitSend(send, completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendTimeout))
		Expect(send.Status.Turns[0].Reply).To(Equal("finally"))
		Expect(send.Status.Phase).To(Equal(sessionsv1alpha1.SendCompleted))
	})

	Context("with a requester", func() {
		BeforeEach(func() {
			createAgent(ns, "alice", announceSkip, rule("^hi alice", sessionsv1alpha1.ReplySkip))
			createAgent(ns, "bob", announceSkip, rule("^hello", "hi alice"))
			createSession(ns, "agent:alice:main", "alice")
			createSession(ns, "agent:bob:main", "bob")
		})

		It("runs the reply-back until REPLY_SKIP, with inter-session provenance", func() {
			send := waitSend(createSend(ns, "agent:bob:main", "hello bob", 30, "agent:alice:main"), completed)
			Expect(send.Status.Turns).To(Equal([]sessionsv1alpha1.SendTurn{
				{Round: 1, Session: "agent:bob:main", Reply: "hi alice"},
				{Round: 2, Session: "agent:alice:main", Reply: sessionsv1alpha1.ReplySkip, Skipped: true},
			}))
			var alice sessionsv1alpha1.AgentSession
			Expect(k8s.Get(ctx, keyOf(ns, "agent:alice:main"), &alice)).To(Succeed())
			recs := messages(ns, &alice)
			Expect(recs[0].Message.Provenance).To(Equal(&transcript.Provenance{
				Kind: transcript.ProvenanceInterSession, SourceSessionKey: "agent:bob:main", SourceTool: "sessions_send"}))
		})

		It("gives the announce the latest real reply, not the REPLY_SKIP that ended the exchange", func() {
			waitSend(createSend(ns, "agent:bob:main", "hello bob", 30, "agent:alice:main"), completed)
			var bob sessionsv1alpha1.AgentSession
			Expect(k8s.Get(ctx, keyOf(ns, "agent:bob:main"), &bob)).To(Succeed())
			Expect(texts(messages(ns, &bob))).To(ContainElement("user: " + announce.AgentAnnounceInput("hello bob", "hi alice", "hi alice")))
		})

		It("stops at maxPingPongTurns", func() {
			createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{MaxPingPongTurns: ptr.To[int32](2)}})
			send := waitSend(createSend(ns, "agent:bob:main", "chat", 30, "agent:alice:main"), completed)
			Expect(send.Status.Turns).To(HaveLen(3))
			Expect(send.Status.Turns[1].Session).To(Equal("agent:alice:main"))
			Expect(send.Status.Turns[2].Session).To(Equal("agent:bob:main"))
			Expect(send.Status.Turns[2].Reply).To(Equal("echo: echo: echo: chat"))
		})

		It("runs no reply-back with maxPingPongTurns 0", func() {
			createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{MaxPingPongTurns: ptr.To[int32](0)}})
			send := waitSend(createSend(ns, "agent:bob:main", "chat", 30, "agent:alice:main"), completed)
			Expect(send.Status.Turns).To(HaveLen(1))
		})
	})

	Context("announce", func() {
		BeforeEach(func() {
			// The announce follows a send between agents: alice asks and ends the ping-pong.
			createAgent(ns, "alice", rule(".", sessionsv1alpha1.ReplySkip))
			createSession(ns, "agent:alice:main", "alice")
			createAgent(ns, "bob", rule("^Agent-to-agent announce step", "bob says: all done"))
			createSession(ns, "agent:bob:main", "bob", func(s *sessionsv1alpha1.AgentSession) {
				s.Spec.DeliveryContext = &sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: "room-1"}
			})
		})

		It("delivers to the channel's sink once, with the idempotency key", func() {
			createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Delivery: []sessionsv1alpha1.DeliverySink{{Channel: "webchat", URL: sink.URL}}})
			send := waitSend(createSend(ns, "agent:bob:main", "wrap up", 30, "agent:alice:main"), completed)
			Expect(send.Status.Announce).To(Equal(&sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceDelivered, Message: "bob says: all done", Target: "webchat:room-1"}))
			got := sink.received(ns, "agent:bob:main")
			Expect(got).To(HaveLen(1))
			Expect(got[0].Text).To(Equal("bob says: all done"))
			Expect(got[0].IdempotencyKey).To(Equal(string(send.UID) + "/announce"))
		})

		It("sends a sink token only from a vouched or opted-in Secret", func() {
			for _, sec := range []*corev1.Secret{
				{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-token"}, StringData: map[string]string{"token": "private"}},
				{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sink-token", Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
					StringData: map[string]string{"token": "shared"}},
			} {
				Expect(k8s.Create(ctx, sec)).To(Succeed())
			}
			sinkWith := func(secret string) []sessionsv1alpha1.DeliverySink {
				return []sessionsv1alpha1.DeliverySink{{Channel: "webchat", URL: sink.URL, SecretRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "token"}}}
			}
			// Nobody vouched for team-token (this suite runs no webhook) and it did not opt in.
			createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Delivery: sinkWith("team-token")})
			pol := &sessionsv1alpha1.SessionPolicy{}
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, pol)).To(Succeed())
				c := meta.FindStatusCondition(pol.Status.Conditions, sessionsv1alpha1.ConditionReady)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal("SecretNotUsable"))
				g.Expect(c.Message).To(Equal("delivery sink for webchat: " + policy.UnusableSecret("team-token")))
			}, testenv.Timeout, testenv.Interval).Should(Succeed())
			send := waitSend(createSend(ns, "agent:bob:main", "wrap up", 30, "agent:alice:main"), completed)
			Expect(send.Status.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceFailed))
			Expect(send.Status.Announce.Reason).To(ContainSubstring(policy.UnusableSecret("team-token")))
			Expect(sink.received(ns, "agent:bob:main")).To(BeEmpty(), "nothing is posted with or without the token")

			pol.Spec.Delivery = sinkWith("sink-token")
			Expect(k8s.Update(ctx, pol)).To(Succeed())
			send = waitSend(createSend(ns, "agent:bob:main", "wrap up", 30, "agent:alice:main"), completed)
			Expect(send.Status.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceDelivered))
			Expect(sink.authorization(string(send.UID) + "/announce")).To(Equal("Bearer shared"))
		})

		It("skips for want of a sink", func() {
			send := waitSend(createSend(ns, "agent:bob:main", "wrap up", 30, "agent:alice:main"), completed)
			Expect(send.Status.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceNoSink))
			Expect(send.Status.Announce.Reason).To(ContainSubstring(`no delivery sink for channel "webchat"`))
		})

		It("is blocked at delivery by a deny rule", func() {
			createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{
				SendPolicy: sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{KeyPrefix: "agent:bob:"}, Action: sessionsv1alpha1.ActionDeny}}},
				Delivery:   []sessionsv1alpha1.DeliverySink{{Channel: "webchat", URL: sink.URL}},
			})
			send := waitSend(createSend(ns, "agent:bob:main", "wrap up", 30, "agent:alice:main"), completed)
			Expect(send.Status.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceSkipped))
			Expect(send.Status.Announce.Reason).To(ContainSubstring("blocked at delivery: send denied by sessionPolicy default rule 1"))
			Expect(sink.received(ns, "agent:bob:main")).To(BeEmpty())
		})

		It("is blocked at delivery when its deliveryContext points at a denied chat", func() {
			// Issue 30 finding 4: the session is allowed, its announce is rerouted to a
			// discord group the policy denies; the check judges where it goes.
			createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{
				SendPolicy: sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{Channel: "discord", ChatType: sessionsv1alpha1.ChatTypeGroup}, Action: sessionsv1alpha1.ActionDeny}}},
				Delivery:   []sessionsv1alpha1.DeliverySink{{Channel: "discord", URL: sink.URL}, {Channel: "webchat", URL: sink.URL}},
			})
			bob := &sessionsv1alpha1.AgentSession{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: sessionkey.ObjectName("agent:bob:main")}, bob)).To(Succeed())
			bob.Spec.DeliveryContext = &sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "group:7"}
			Expect(k8s.Update(ctx, bob)).To(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(mgrCache.Get(ctx, client.ObjectKeyFromObject(bob), bob)).To(Succeed())
				g.Expect(bob.Spec.DeliveryContext.Channel).To(Equal("discord"))
			}, testenv.Timeout, testenv.Interval).Should(Succeed())

			send := waitSend(createSend(ns, "agent:bob:main", "wrap up", 30, "agent:alice:main"), completed)
			Expect(send.Status.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceSkipped))
			Expect(send.Status.Announce.Reason).To(Equal("blocked at delivery: the announce goes to group chat group:7 on discord (spec.deliveryContext), " +
				"not to the session's own direct chat on unknown: denied by sessionPolicy default rule 1 (channel=discord, chatType=group -> deny); " +
				"point spec.deliveryContext at an allowed chat or change the rule"))
			Expect(sink.received(ns, "agent:bob:main")).To(BeEmpty())
		})
	})

	It("leaves one copy of each message and one delivery when the manager restarts mid-send", func() {
		createAgent(ns, "bob", rule("^Agent-to-agent announce step", "announced"),
			sessionsv1alpha1.ScriptRule{Match: "^restart", Reply: "survived", Delay: &metav1.Duration{Duration: 5 * time.Minute}})
		bob := createSession(ns, "agent:bob:main", "bob")
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Delivery: []sessionsv1alpha1.DeliverySink{{Channel: "unknown", URL: sink.URL}},
			AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{MaxPingPongTurns: ptr.To[int32](0)}})
		send := createSend(ns, "agent:bob:main", "restart please", 30, "agent:alice:main")
		Eventually(func() int { return len(messages(ns, bob)) }, testenv.Timeout, testenv.Interval).Should(Equal(1))

		stopManager()
		startManager()
		// The new engine submits round 1 again: the input is already there, the model waits
		// (two timers: the turn's timeout and the scripted delay).
		Eventually(fakeClock.Waiters, testenv.Timeout, testenv.Interval).Should(BeNumerically(">=", 2))
		fakeClock.Step(6 * time.Minute)
		waitSend(send, completed)
		Expect(send.Status.Reply).To(Equal("survived"))

		recs := messages(ns, bob)
		expectNoDuplicates(recs)
		Expect(texts(recs)).To(Equal([]string{
			"user: restart please", "assistant: survived",
			"user: " + announce.AgentAnnounceInput("restart please", "survived", "survived"), "assistant: announced",
		}))
		Expect(sink.received(ns, "agent:bob:main")).To(HaveLen(1))
	})
})
