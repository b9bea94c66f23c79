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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The relabelling rule (issue 30, findings 3 and 4): "erin" is a namespace editor (the
// shipped agent-sessions-view and agent-sessions-edit ClusterRoles), "olga" an owner (plus
// agent-sessions-admin, which grants set-send-policy). The send policy judges a session by
// its channel and chat type and delivery by where the announce goes, so neither may be
// relabelled by an editor, and a key that names a channel decides it for everyone.
var _ = Describe("the relabelling rule", Ordered, func() {
	const (
		main     = "agent:main:main"
		group    = "agent:main:discord:group:g1"
		recreate = "agent:main:discord:group:g2"
	)
	var (
		ns         string
		erin, olga client.Client
	)
	BeforeAll(func() {
		shippedRoles()
		erin, olga = userClient("erin"), userClient("olga")
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "relabel-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		ns = n.Name
		bind(ns, "erin", "agent-sessions-view", "agent-sessions-edit")
		bind(ns, "olga", "agent-sessions-view", "agent-sessions-edit", "agent-sessions-admin")
		for _, s := range []*sessionsv1alpha1.AgentSession{
			sessionObj(ns, main, "main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.LastChannel = "webchat" }),
			sessionObj(ns, group, "main"),
			sessionObj(ns, recreate, "main"),
		} {
			Expect(k8s.Create(ctx, s)).To(Succeed())
		}
		Eventually(func(g Gomega) {
			var ss sessionsv1alpha1.AgentSessionList
			g.Expect(cached.List(ctx, &ss, client.InNamespace(ns))).To(Succeed())
			g.Expect(ss.Items).To(HaveLen(3))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})
	patch := func(c client.Client, key, body string) func() error {
		return func() error {
			s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)}}
			return c.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(body)))
		}
	}
	forbiddenTo := func(field string) string {
		return `spec.` + field + `: Forbidden: user "erin" may not set or change spec.` + field + ` of session ` + main
	}
	needsVerb := "the send policy and announce delivery decide on it (the relabelling rule), so setting or changing it needs the verb set-send-policy on the session, as spec.sendPolicy does"
	keyDecides := "session key " + group + " names channel discord and chat type group, and the key decides what the send policy judges (the relabelling rule)"

	DescribeTable("admission",
		judge,
		// Finding 3: a denied discord group relabelled.
		Entry("an editor patching a group's channel", func() verdict {
			return denied(`spec.channel: Invalid value: "webchat": `+keyDecides+": spec.channel must be discord or unset, not webchat",
				patch(erin, group, `{"spec":{"channel":"webchat"}}`))
		}),
		Entry("an editor patching a group's chatType", func() verdict {
			return denied(`spec.chatType: Invalid value: "direct": `+keyDecides+": spec.chatType must be group or unset, not direct",
				patch(erin, group, `{"spec":{"chatType":"direct"}}`))
		}),
		Entry("an owner patching a group's channel: the key decides for everyone", func() verdict {
			return denied(`spec.channel: Invalid value: "webchat"`, patch(olga, group, `{"spec":{"channel":"webchat"}}`))
		}),
		Entry("the manager patching a group's lastChannel elsewhere", func() verdict {
			return denied(`spec.lastChannel: Invalid value: "webchat"`, patch(manager, group, `{"spec":{"lastChannel":"webchat"}}`))
		}),
		Entry("an editor patching a session's lastChannel", func() verdict {
			return denied(forbiddenTo("lastChannel")+` (to "discord"): `+needsVerb+" (the agent-sessions-send-admin ClusterRole); grant it on agentsessions/"+sessionkey.ObjectName(main),
				patch(erin, main, `{"spec":{"lastChannel":"discord"}}`))
		}),
		Entry("an editor patching a session's channel", func() verdict {
			return denied(forbiddenTo("channel"), patch(erin, main, `{"spec":{"channel":"discord"}}`))
		}),
		Entry("an editor patching a session's chatType", func() verdict {
			return denied(forbiddenTo("chatType"), patch(erin, main, `{"spec":{"chatType":"group"}}`))
		}),
		// Finding 4: announces rerouted.
		Entry("an editor patching a session's lastTo", func() verdict {
			return denied(forbiddenTo("lastTo")+` (to "group:7")`, patch(erin, main, `{"spec":{"lastTo":"group:7"}}`))
		}),
		Entry("an editor pointing a session's deliveryContext at a discord group", func() verdict {
			return denied(forbiddenTo("deliveryContext"), patch(erin, main, `{"spec":{"deliveryContext":{"channel":"discord","to":"group:7"}}}`))
		}),
		Entry("an editor creating a session with a deliveryContext", func() verdict {
			return denied(`spec.deliveryContext: Forbidden: user "erin" may not set or change spec.deliveryContext of session agent:ops:main`,
				by(erin, sessionObj(ns, "agent:ops:main", "ops", func(s *sessionsv1alpha1.AgentSession) {
					s.Spec.DeliveryContext = &sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "group:7"}
				})))
		}),
		Entry("an editor patching what the policy does not judge", func() verdict {
			return allowed(patch(erin, main, `{"spec":{"label":"renamed","displayName":"Main"}}`))
		}),
		Entry("an editor restating what the key implies", func() verdict {
			return allowed(patch(erin, group, `{"spec":{"channel":"discord","chatType":"group"}}`))
		}),
		Entry("an owner with set-send-policy rerouting a session", func() verdict {
			return allowed(patch(olga, main, `{"spec":{"lastChannel":"telegram","lastTo":"alice","deliveryContext":{"channel":"telegram","to":"direct:alice"}}}`))
		}),
		Entry("the manager recording lastChannel and lastTo", func() verdict {
			return allowed(patch(manager, main, `{"spec":{"lastChannel":"webchat","lastTo":"bob"}}`))
		}),
		// Finding 3: delete and recreate under the same key.
		Entry("an editor recreating a group under its key with another channel", func() verdict {
			return denied(`spec.channel: Invalid value: "webchat": session key `+recreate+" names channel discord", func() error {
				if err := erin.Delete(ctx, sessionObj(ns, recreate, "main")); err != nil {
					return err
				}
				return erin.Create(ctx, sessionObj(ns, recreate, "main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.Channel = "webchat" }))
			})
		}),
		Entry("an editor recreating a group under its key as a direct chat", func() verdict {
			return denied(`spec.chatType: Invalid value: "direct"`,
				by(erin, sessionObj(ns, recreate, "main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.ChatType = sessionsv1alpha1.ChatTypeDirect })))
		}),
	)

	It("lets an editor recreate the group as its key says", func() {
		Eventually(func() error {
			return erin.Create(ctx, sessionObj(ns, recreate, "main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.ChatType = sessionsv1alpha1.ChatTypeGroup }))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})
})
