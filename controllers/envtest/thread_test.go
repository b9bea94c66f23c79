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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// A thread-bound, session-mode sub-agent is a persistent session in its own thread of the
// requester's chat: it stays after its first task, takes later sends from its requester, and
// its announces (and the run's) are delivered to that thread.
var _ = Describe("mode session and thread", func() {
	It("keeps the child active in its own thread, for later sends from its requester", func() {
		ns := newNamespace()
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{
			AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}, MaxPingPongTurns: ptr.To[int32](0)},
			Delivery:     []sessionsv1alpha1.DeliverySink{{Channel: "webchat", URL: sink.URL}},
		})
		// This suite runs no webhook: the spawn guards (allowAgents) are not in the way.
		createAgent(ns, "lead", rule("^Sub-agent announce step", "the helper is done"))
		createAgent(ns, "helper", rule("^look", "found it"), rule("^more", "more found"),
			rule("^Agent-to-agent announce step", "helper says: more found"))
		createSession(ns, "agent:lead:main", "lead", func(s *sessionsv1alpha1.AgentSession) {
			s.Spec.DeliveryContext = &sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: "room-1"}
		})

		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look around", AgentID: "helper", RequesterSessionKey: "agent:lead:main",
			Thread: true, Mode: sessionsv1alpha1.ModeSession}), runCompleted)
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))
		Expect(run.Status.ArchiveAt).To(BeNil(), "a session-mode child has no archive TTL")
		thread := "subagent-" + string(run.UID)

		var child sessionsv1alpha1.AgentSession
		Expect(k8s.Get(ctx, keyOf(ns, run.Status.ChildSessionKey), &child)).To(Succeed())
		Expect(child.Status.Phase).To(Equal(sessionsv1alpha1.SessionActive))
		Expect(child.Annotations).NotTo(HaveKey(sessionsv1alpha1.ArchiveAtAnnotation))
		Expect(child.Spec.DeliveryContext).To(Equal(&sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: "room-1", ThreadID: thread}))
		Expect(run.Status.Announce.Target).To(Equal("webchat:room-1#" + thread))
		got := sink.received(ns, "agent:lead:main")
		Expect(got).To(HaveLen(1))
		Expect(got[0].Text).To(Equal("Status: succeeded\nResult: the helper is done\nNotes: none\nStats: " + announce.StatsLine(*run.Status.Stats)))
		Expect(got[0].ThreadID).To(Equal(thread), "the run's announce goes to the child's thread of the requester's chat")
		Expect(sink.received(ns, run.Status.ChildSessionKey)).To(BeEmpty(),
			"the child session runs with deliver: false: its task's reply (found it) leaves the cluster only through the requester's announce")

		send := waitSend(createSend(ns, run.Status.ChildSessionKey, "more please", 30, "agent:lead:main"), completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendOK))
		Expect(send.Status.Reply).To(Equal("more found"))
		got = sink.received(ns, run.Status.ChildSessionKey)
		Expect(got).To(HaveLen(1))
		Expect(got[0].ThreadID).To(Equal(thread), "the child's own announces stay in its thread")
		Expect(got[0].Text).To(Equal("helper says: more found"))
	})
})
