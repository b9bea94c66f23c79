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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func newNamespace() string {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "admitted-"}}
	Expect(k8s.Create(ctx, n)).To(Succeed())
	return n.Name
}

// createAgent makes a scripted Agent and waits until it is Ready.
func createAgent(ns, name string, rules ...sessionsv1alpha1.ScriptRule) {
	a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: rules}}}
	Expect(k8s.Create(ctx, a)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(a.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
}

// createSession makes a session and waits for its sessionId.
func createSession(ns, key, agent string, mutate ...func(*sessionsv1alpha1.AgentSession)) *sessionsv1alpha1.AgentSession {
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: ns},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agent}}
	for _, m := range mutate {
		m(s)
	}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.SessionID).NotTo(BeEmpty())
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	return s
}

// person is a user with a client certificate bound to the shipped ClusterRoles in ns.
func person(ns, name string, roles ...string) client.Client {
	shippedRoles()
	for _, role := range roles {
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + role, Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
		})).To(Succeed())
	}
	return userClient(name)
}

func newSend(ns, key, message, from string) *sessionsv1alpha1.SessionSend {
	return &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{GenerateName: "send-", Namespace: ns},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: message, TimeoutSeconds: ptr.To[int32](60), FromSessionKey: from}}
}

func finished(s *sessionsv1alpha1.SessionSend) *sessionsv1alpha1.SessionSend {
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.CompletedAt).NotTo(BeNil())
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	return s
}

// records are a session's transcript records as "<role>: <text>", tool records included.
func records(ns, key string) []string {
	s := &sessionsv1alpha1.AgentSession{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: sessionkey.ObjectName(key)}, s)).To(Succeed())
	page, err := store.Read(ctx, ns, s.Status.SessionID, transcript.ReadOptions{Limit: transcript.MaxLimit, IncludeTools: true})
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, r := range page.Messages {
		var b strings.Builder
		for _, c := range r.Message.Content {
			b.WriteString(c.Text)
		}
		out = append(out, r.Message.Role+": "+b.String())
	}
	return out
}

func toolCall(name string, args map[string]any) sessionsv1alpha1.ScriptToolCall {
	raw, err := json.Marshal(args)
	Expect(err).NotTo(HaveOccurred())
	return sessionsv1alpha1.ScriptToolCall{Name: name, Arguments: &runtime.RawExtension{Raw: raw}}
}

// Issue 44, point 1: a target that chooses not to reply (exactly REPLY_SKIP) makes a waited
// sessions_send ok with reply "" and noReply, through the real admission of the send; the
// announce step never shows the token.
var _ = Describe("an empty reply", func() {
	It("is ok with reply \"\" and noReply, and the announce shows no REPLY_SKIP", func() {
		ns := newNamespace()
		Expect(k8s.Create(ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
			Spec: sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityAll,
				AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}, MaxPingPongTurns: ptr.To[int32](0)}}})).To(Succeed())
		createAgent(ns, "asker", sessionsv1alpha1.ScriptRule{Match: "^ask",
			ToolCalls: []sessionsv1alpha1.ScriptToolCall{toolCall("sessions_send", map[string]any{"sessionKey": "agent:quiet:main", "message": "anything?", "timeoutSeconds": 60})},
			Reply:     "got {{toolResults}}"})
		createAgent(ns, "quiet", sessionsv1alpha1.ScriptRule{Match: ".", Reply: "REPLY_SKIP"})
		createSession(ns, "agent:asker:main", "asker")
		createSession(ns, "agent:quiet:main", "quiet")

		finished(func() *sessionsv1alpha1.SessionSend {
			s := newSend(ns, "agent:asker:main", "ask quiet", "")
			Expect(k8s.Create(ctx, s)).To(Succeed())
			return s
		}())
		var result map[string]any
		for _, r := range records(ns, "agent:asker:main") {
			if text, ok := strings.CutPrefix(r, "toolResult: "); ok {
				Expect(json.Unmarshal([]byte(text), &result)).To(Succeed())
			}
		}
		Expect(result).To(HaveKeyWithValue("status", "ok"))
		Expect(result).To(HaveKeyWithValue("reply", ""))
		Expect(result).To(HaveKeyWithValue("noReply", true))

		var sends sessionsv1alpha1.SessionSendList
		Expect(k8s.List(ctx, &sends, client.InNamespace(ns))).To(Succeed())
		var tools *sessionsv1alpha1.SessionSend
		for i := range sends.Items {
			if sends.Items[i].Spec.FromSessionKey == "agent:asker:main" {
				tools = &sends.Items[i]
			}
		}
		Expect(tools).NotTo(BeNil(), "the tool's send")
		finished(tools)
		Expect(tools.Status.Status).To(Equal(sessionsv1alpha1.SendOK))
		Expect(tools.Status.Reply).To(BeEmpty())
		Expect(tools.Status.Turns[0].Skipped).To(BeTrue())
		Eventually(func() []string { return records(ns, "agent:quiet:main") }, testenv.Timeout, testenv.Interval).
			Should(ContainElement(ContainSubstring("Round 1 reply: (no reply)")))
		Expect(records(ns, "agent:quiet:main")).NotTo(ContainElement(ContainSubstring("Round 1 reply: REPLY_SKIP")))
	})
})

// Issue 44, point 4: a person's standalone /send on|off|inherit sets the session's
// spec.sendPolicy when the person holds set-send-policy (the real SubjectAccessReview),
// is recorded as a command the model never sees, and is refused with the reason otherwise.
var _ = Describe("/send on|off|inherit", func() {
	It("sets the send policy for its owner only, recorded as a command", func() {
		ns := newNamespace()
		createAgent(ns, "main", sessionsv1alpha1.ScriptRule{Match: ".", Reply: "model saw: {{input}}"})
		key := "agent:main:discord:group:g1"
		s := createSession(ns, key, "main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.SendPolicy = sessionsv1alpha1.ActionDeny })
		owner := person(ns, "owner", "agent-sessions-edit", "agent-sessions-send-admin")
		dave := person(ns, "dave", "agent-sessions-edit")

		By("an ordinary send is refused by the session's deny, a /send on without the verb by its owner-only rule")
		err := dave.Create(ctx, newSend(ns, key, "hello", ""))
		Expect(err).To(MatchError(ContainSubstring("spec.sendPolicy=deny")))
		err = dave.Create(ctx, newSend(ns, key, "/send on", ""))
		Expect(err).To(MatchError(ContainSubstring(`user "dave" may not send /send on into session ` + key)))
		Expect(err).To(MatchError(ContainSubstring("needs the verb set-send-policy")))

		By("a session's /send on is refused whoever creates it, even where it sees the target")
		Expect(k8s.Create(ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
			Spec: sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityAll}})).To(Succeed())
		createSession(ns, "agent:main:main", "main")
		err = k8s.Create(ctx, newSend(ns, key, "/send on", "agent:main:main"))
		Expect(err).To(MatchError(ContainSubstring("may not send it")))

		By("the owner's /send on lifts the deny and never reaches the model")
		on := newSend(ns, key, "/send on", "")
		Expect(owner.Create(ctx, on)).To(Succeed())
		finished(on)
		Expect(on.Status.Status).To(Equal(sessionsv1alpha1.SendOK))
		Expect(on.Status.Reply).To(Equal("send policy of " + key + ": on (spec.sendPolicy=allow)"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		Expect(s.Spec.SendPolicy).To(Equal(sessionsv1alpha1.ActionAllow))
		Expect(records(ns, key)).To(Equal([]string{"command: /send on"}))

		By("now an ordinary send reaches the model; /send inherit unsets the override")
		hello := newSend(ns, key, "hello", "")
		Expect(dave.Create(ctx, hello)).To(Succeed())
		Expect(finished(hello).Status.Reply).To(Equal("model saw: hello"))
		inherit := newSend(ns, key, "/send inherit", "")
		Expect(owner.Create(ctx, inherit)).To(Succeed())
		Expect(finished(inherit).Status.Status).To(Equal(sessionsv1alpha1.SendOK))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		Expect(s.Spec.SendPolicy).To(BeEmpty())
		Expect(records(ns, key)).To(Equal([]string{"command: /send on", "user: hello", "assistant: model saw: hello", "command: /send inherit"}))
	})
})
