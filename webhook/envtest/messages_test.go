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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// What a person reads at kubectl apply when an object names something that is not there:
// the message says what is wrong and how to fix it, never only "Not found".
var _ = Describe("admission messages", Ordered, func() {
	var ns string
	BeforeAll(func() {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "msg-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		ns = n.Name
		Expect(k8s.Create(ctx, agentObj(ns, "main"))).To(Succeed())
		Expect(k8s.Create(ctx, sessionObj(ns, "agent:main:main", "main"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(cached.Get(ctx, client.ObjectKey{Namespace: ns, Name: "main"}, &sessionsv1alpha1.Agent{})).To(Succeed())
			g.Expect(cached.Get(ctx, client.ObjectKey{Namespace: ns, Name: sessionkey.ObjectName("agent:main:main")}, &sessionsv1alpha1.AgentSession{})).To(Succeed())
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})

	deny := func(o client.Object) string {
		err := k8s.Create(ctx, o)
		Expect(err).To(HaveOccurred())
		return err.Error()
	}

	It("calls a malformed key invalid and says why", func() {
		msg := deny(sendObj(ns, "agent::main", ""))
		Expect(msg).To(ContainSubstring(`spec.sessionKey: Invalid value: "agent::main": not a valid session key (agent id is empty`))
		Expect(msg).NotTo(ContainSubstring("Not found"))
		msg = deny(sendObj(ns, "agent:main:main", "agent::main"))
		Expect(msg).To(ContainSubstring(`spec.fromSessionKey: Invalid value: "agent::main": not a valid session key`))
		msg = deny(runObj(ns, "agent::main", "main"))
		Expect(msg).To(ContainSubstring(`spec.requesterSessionKey: Invalid value: "agent::main": not a valid session key`))
	})

	It("says the Agent is missing for a send to an unknown agent's main session", func() {
		msg := deny(sendObj(ns, "agent:ghost:main", ""))
		Expect(msg).To(ContainSubstring(`spec.sessionKey: Not found: "agent:ghost:main": Agent ghost does not exist in namespace ` + ns))
	})

	It("says a well-formed key names no session", func() {
		msg := deny(sendObj(ns, "agent:main:telegram:group:none", ""))
		Expect(msg).To(ContainSubstring(`Not found: "agent:main:telegram:group:none": no AgentSession in namespace ` + ns + " has this key or sessionId"))
	})

	It("gives no allowAgents hint for a spawn under an Agent that does not exist", func() {
		msg := deny(runObj(ns, "agent:main:main", "ghost"))
		Expect(msg).To(ContainSubstring(`spec.agentId: Not found: "ghost": Agent ghost does not exist`))
		Expect(msg).NotTo(ContainSubstring("allowAgents"))
	})

	It("names metadata.name for a SessionPolicy not named default", func() {
		msg := deny(&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "strict", Namespace: ns}})
		Expect(msg).To(ContainSubstring(`metadata: Invalid value: metadata.name is 'strict': a namespace has one SessionPolicy and it is named default`))
		Expect(msg).NotTo(ContainSubstring("<nil>"))
	})
})
