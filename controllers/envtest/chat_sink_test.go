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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/delivery/chatfake"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

const chatToken = "discord-bot-token-of-the-suite"

// chatPlatform is a chatfake server on loopback with its URL.
type chatPlatform struct {
	*chatfake.Server
	URL string
}

func newChatPlatform(kind string) *chatPlatform {
	s := chatfake.New(kind, chatToken)
	srv := httptest.NewServer(s)
	DeferCleanup(srv.Close)
	return &chatPlatform{Server: s, URL: srv.URL}
}

// messagesTo are the messages the platform took for channel (or its threads).
func (p *chatPlatform) messagesTo(channel string) []chatfake.Message {
	var out []chatfake.Message
	for _, m := range p.Messages() {
		if m.To == channel || strings.HasPrefix(m.Thread, "thread-") && m.To == m.Thread && belongsTo(p, m.Thread, channel) {
			out = append(out, m)
		}
	}
	return out
}

// belongsTo reports whether thread was started from a message of channel.
func belongsTo(p *chatPlatform, thread, channel string) bool {
	for _, m := range p.Messages() {
		if "thread-"+m.ID == thread {
			return m.To == channel
		}
	}
	return false
}

// discordPolicy sends the namespace's discord announces to the suite's Discord API.
func discordPolicy(ns string) {
	Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "discord-bot", Namespace: ns,
		Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}}, StringData: map[string]string{"token": chatToken}})).To(Succeed())
	createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Delivery: []sessionsv1alpha1.DeliverySink{{Channel: "discord", Kind: sessionsv1alpha1.DeliveryDiscord, APIURL: discord.URL,
		SecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "discord-bot"}, Key: "token"}}}})
}

var _ = Describe("a chat sink", func() {
	It("delivers a thread-bound run's long announce in parts, into a thread made from the first, across a manager restart", func() {
		ns := newNamespace()
		discordPolicy(ns)
		channel := "4242" + strings.TrimPrefix(ns, "ctrl-")
		long := strings.Repeat("the llamas are fine ", 120) // over Discord's 2,000 characters
		createAgent(ns, "lead", rule("^Sub-agent announce step", "Notes: "+long))
		createAgent(ns, "helper", rule("^look", "found it"))
		createSession(ns, "agent:lead:discord:channel:"+channel, "lead")
		run := createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look around", AgentID: "helper",
			RequesterSessionKey: "agent:lead:discord:channel:" + channel, Thread: true})
		waitRun(run, func(g Gomega, r *sessionsv1alpha1.SubagentRun) {
			g.Expect(r.Status.Announce).NotTo(BeNil())
			g.Expect(r.Status.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceDelivered), r.Status.Announce.Reason)
		})
		a := run.Status.Announce
		Expect(a.Parts).To(BeNumerically(">=", 2))
		Expect(a.DeliveredParts).To(HaveLen(int(a.Parts)))
		Expect(a.Thread).NotTo(BeNil())
		Expect(a.Thread.Channel).To(Equal("discord"))
		msgs := discord.messagesTo(channel)
		Expect(msgs).To(HaveLen(int(a.Parts)), "each part once")
		Expect(msgs[0].Thread).To(BeEmpty(), "the first part starts the thread")
		for i, m := range msgs[1:] {
			Expect(m.Thread).To(Equal(a.Thread.ID), "part %d in the run's thread", i+2)
		}
	})

	It("goes on after a 429 and a restart from the first part not recorded, posting none twice", func() {
		ns := newNamespace()
		discordPolicy(ns)
		channel := "4343" + strings.TrimPrefix(ns, "ctrl-")
		long := strings.Repeat("the llamas are fine ", 120)
		createAgent(ns, "lead", rule("^Sub-agent announce step", "Notes: "+long))
		createAgent(ns, "helper", rule("^look", "found it"))
		createSession(ns, "agent:lead:discord:channel:"+channel, "lead")
		// Part 1 is taken; part 2 meets a 429 (retry after 1s on the suite's fake clock).
		discord.FailAfter(1, chatfake.Failure{Status: http.StatusTooManyRequests, Text: "You are being rate limited.", Wait: 1})
		run := createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look around", AgentID: "helper", RequesterSessionKey: "agent:lead:discord:channel:" + channel})
		waitRun(run, func(g Gomega, r *sessionsv1alpha1.SubagentRun) {
			g.Expect(r.Status.Announce).NotTo(BeNil())
			g.Expect(r.Status.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceDelivering))
			g.Expect(r.Status.Announce.Attempts).To(Equal(int32(1)))
		})
		Expect(run.Status.Announce.DeliveredParts).To(HaveLen(1))
		Expect(run.Status.Announce.Error).To(Equal("You are being rate limited."))
		stopManager()
		startManager()
		Consistently(func() int { return len(discord.messagesTo(channel)) }, 2*time.Second, testenv.Interval).Should(Equal(1),
			"the platform's wait holds across the restart")
		fakeClock.Step(2 * time.Second)
		waitRun(run, func(g Gomega, r *sessionsv1alpha1.SubagentRun) {
			g.Expect(r.Status.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceDelivered), r.Status.Announce.Reason)
		})
		Expect(discord.messagesTo(channel)).To(HaveLen(int(run.Status.Announce.Parts)), "every part once")
		Expect(run.Status.Announce.Attempts).To(BeZero())
	})

	It("fails at once on a 4xx with Discord's text, and no token in status or Events", func() {
		ns := newNamespace()
		discordPolicy(ns)
		createAgent(ns, "lead", rule("^Sub-agent announce step", "Notes: hi"))
		createAgent(ns, "helper", rule("^look", "found it"))
		createSession(ns, "agent:lead:discord:channel:1", "lead")
		discord.FailAfter(0, chatfake.Failure{Status: http.StatusForbidden, Text: "Missing Access"})
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look around", AgentID: "helper",
			RequesterSessionKey: "agent:lead:discord:channel:1"}), runCompleted)
		a := run.Status.Announce
		Expect(a.Status).To(Equal(sessionsv1alpha1.AnnounceFailed))
		Expect(a.Error).To(Equal("Missing Access"))
		Expect(a.Reason).To(ContainSubstring("discord answered part 1 of 1 with 403"))
		var events corev1.EventList
		Expect(k8s.List(ctx, &events)).To(Succeed())
		for _, e := range events.Items {
			Expect(e.Message).NotTo(ContainSubstring(chatToken))
		}
		Expect(fmt.Sprintf("%+v", *a)).NotTo(ContainSubstring(chatToken))
	})
})
