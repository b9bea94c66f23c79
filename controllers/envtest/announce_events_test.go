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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

var _ = Describe("the events delivery sink", func() {
	It("records a delivered announce as an Event on the session, and says noSink where no sink is", func() {
		ns := newNamespace()
		createAgent(ns, "alice", rule(".", sessionsv1alpha1.ReplySkip))
		createSession(ns, "agent:alice:main", "alice")
		createAgent(ns, "bob", rule("^Agent-to-agent announce step", "bob says: all done"))
		bob := createSession(ns, "agent:bob:main", "bob", func(s *sessionsv1alpha1.AgentSession) { s.Spec.LastChannel = "webchat" })
		createSession(ns, "agent:bob:telegram:group:t1", "bob", func(s *sessionsv1alpha1.AgentSession) { s.Spec.Channel = "telegram" })
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Delivery: []sessionsv1alpha1.DeliverySink{{Channel: "webchat", Kind: sessionsv1alpha1.DeliveryEvents}}})

		send := waitSend(createSend(ns, "agent:bob:main", "wrap up", 30, "agent:alice:main"), completed)
		Expect(send.Status.Announce).To(Equal(&sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceDelivered, Message: "bob says: all done", Target: "webchat"}))
		Eventually(func(g Gomega) []string {
			var list eventsv1.EventList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			var notes []string
			for _, e := range list.Items {
				if e.Regarding.UID == bob.UID && e.Reason == "AnnounceDelivered" {
					notes = append(notes, e.Note)
				}
			}
			return notes
		}, testenv.Timeout, testenv.Interval).Should(ConsistOf("announce to webchat: bob says: all done"))

		other := waitSend(createSend(ns, "agent:bob:telegram:group:t1", "wrap up", 30, "agent:alice:main"), completed)
		Expect(other.Status.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceNoSink))
		Expect(other.Status.Announce.Reason).To(ContainSubstring(`no delivery sink for channel "telegram"`))
	})

	It("needs a url for a webhook sink and takes none for an events sink", func() {
		ns := newNamespace()
		bad := &sessionsv1alpha1.SessionPolicy{}
		bad.Name, bad.Namespace = "default", ns
		bad.Spec.Delivery = []sessionsv1alpha1.DeliverySink{{Channel: "webchat"}}
		err := k8s.Create(ctx, bad)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("a webhook sink needs url; an events sink takes none"))
	})
})
