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
	"errors"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The hostile suite: "alice" is a namespace editor (the shipped agent-sessions-view and
// agent-sessions-edit ClusterRoles, no access to Secrets) and "bob" a namespace owner
// without Secret access (plus agent-sessions-admin). Every case goes through the real
// admission path with their own client certificates; each reproduces a finding of issue 17
// that today's webhooks let through.
var (
	nsH, nsRate string
	alice, bob  client.Client
)

const existingChild = "agent:research:subagent:0b6f9a3e-1111-4222-8333-444455556666"

// userClient provisions a user with a client certificate.
func userClient(name string) client.Client {
	c, err := testenv.UserClient(env, cfg, name)
	Expect(err).NotTo(HaveOccurred())
	return c
}

// shippedRoles creates the ClusterRoles of config/rbac/user_roles.yaml as shipped.
func shippedRoles() { Expect(testenv.ShippedRoles(ctx, k8s)).To(Succeed()) }

func bind(ns, user string, clusterRoles ...string) {
	for _, r := range clusterRoles {
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{GenerateName: user + "-", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		})).To(Succeed())
	}
}

func hostileFixtures() {
	shippedRoles()
	alice, bob = userClient("alice"), userClient("bob")
	for _, ns := range []*string{&nsH, &nsRate} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "hostile-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		*ns = n.Name
		bind(n.Name, "alice", "agent-sessions-view", "agent-sessions-edit")
		bind(n.Name, "bob", "agent-sessions-view", "agent-sessions-edit", "agent-sessions-admin")
	}
	// alice may act as the research agent's main session, and only that one.
	Expect(k8s.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "act-as-research", Namespace: nsH},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{sessionsv1alpha1.GroupVersion.Group}, Resources: []string{"agentsessions"},
			Verbs: []string{sessionsv1alpha1.VerbActAs}, ResourceNames: []string{sessionkey.ObjectName("agent:research:main")}}}})).To(Succeed())
	Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-act-as-research", Namespace: nsH},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "act-as-research"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	})).To(Succeed())
	objs := []client.Object{
		agentObj(nsH, "main", func(a *sessionsv1alpha1.Agent) { a.Spec.Subagents.AllowAgents = []string{"research"} }),
		agentObj(nsH, "research"),
		agentObj(nsH, "ops"),
		sessionObj(nsH, "agent:main:main", "main"),
		sessionObj(nsH, "agent:main:discord:group:g1", "main"),
		sessionObj(nsH, "agent:research:main", "research"),
		sessionObj(nsH, "agent:main:webchat:group:boxed", "main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.Sandboxed = true }),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "team-key", Namespace: nsH}, StringData: map[string]string{"apiKey": "s3cret"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "shared-key", Namespace: nsH, Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
			StringData: map[string]string{"apiKey": "shared"}},
		&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: nsH}, Spec: sessionsv1alpha1.SessionPolicySpec{
			SendPolicy: sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{
				{Match: sessionsv1alpha1.SendRuleMatch{Channel: "discord", ChatType: sessionsv1alpha1.ChatTypeGroup}, Action: sessionsv1alpha1.ActionDeny},
				{Match: sessionsv1alpha1.SendRuleMatch{KeyPrefix: "agent:ops:"}, Action: sessionsv1alpha1.ActionDeny},
			}},
			AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"research", "main"}},
			Visibility:   sessionsv1alpha1.VisibilityAll,
			Limits:       &sessionsv1alpha1.ChainLimits{MaxHops: ptr.To[int32](3)},
		}},
		&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: nsRate}, Spec: sessionsv1alpha1.SessionPolicySpec{
			Visibility: sessionsv1alpha1.VisibilityAgent, Limits: &sessionsv1alpha1.ChainLimits{ToolCreatesPerMinute: ptr.To[int32](3)}}},
		agentObj(nsRate, "main"),
		sessionObj(nsRate, "agent:main:main", "main"),
		sessionObj(nsRate, "agent:main:webchat:direct:u1", "main"),
	}
	for _, o := range objs {
		Expect(k8s.Create(ctx, o)).To(Succeed(), "%T %s", o, o.GetName())
	}
	Expect(manager.Create(ctx, sessionObj(nsH, existingChild, "research", spawnedByMain))).To(Succeed())
	Eventually(func(g Gomega) {
		var ss sessionsv1alpha1.AgentSessionList
		g.Expect(cached.List(ctx, &ss, client.InNamespace(nsH))).To(Succeed())
		g.Expect(ss.Items).To(HaveLen(5))
		for _, ns := range []string{nsH, nsRate} {
			var p sessionsv1alpha1.SessionPolicy
			g.Expect(cached.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &p)).To(Succeed())
		}
		var as sessionsv1alpha1.AgentList
		g.Expect(cached.List(ctx, &as, client.InNamespace(nsH))).To(Succeed())
		g.Expect(as.Items).To(HaveLen(3))
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
}

func withHops(n int, o client.Object) client.Object {
	o.SetAnnotations(map[string]string{sessionsv1alpha1.HopsAnnotation: strconv.Itoa(n)})
	return o
}

func withChildKey(key string, r *sessionsv1alpha1.SubagentRun) *sessionsv1alpha1.SubagentRun {
	r.Annotations = map[string]string{sessionsv1alpha1.ChildSessionKeyAnnotation: key}
	return r
}

func by(c client.Client, o client.Object) func() error {
	return func() error { return c.Create(ctx, o) }
}

// updateSession reads a session as c and writes it back changed.
func updateSession(c client.Client, ns, key string, change func(*sessionsv1alpha1.AgentSession)) func() error {
	return func() error {
		s := &sessionsv1alpha1.AgentSession{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: sessionkey.ObjectName(key)}, s); err != nil {
			return err
		}
		change(s)
		return c.Update(ctx, s)
	}
}

func apiKey(name string) func(*sessionsv1alpha1.Agent) {
	return func(a *sessionsv1alpha1.Agent) {
		a.Spec.Model = sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderOpenAI, Name: "m", BaseURL: "http://127.0.0.1:9/v1",
			APIKeySecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "apiKey"}}
	}
}

func sinkPolicy(ns, secret string) *sessionsv1alpha1.SessionPolicy {
	return &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}, Spec: sessionsv1alpha1.SessionPolicySpec{
		Delivery: []sessionsv1alpha1.DeliverySink{{Channel: "discord", URL: "http://127.0.0.1:9/hook",
			SecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "apiKey"}}}}}
}

var _ = Describe("hostile namespace users", Ordered, func() {
	BeforeAll(hostileFixtures)

	actAs := func(key string) string {
		return `may not act as session ` + key
	}
	secretDenied := func(user, name string) string {
		return `user "` + user + `" may not get Secret "` + name + `": reference only a Secret you may get (grant get on secrets/` + name +
			`), or label the Secret sessions.agents.dev/agent-usable=true`
	}

	DescribeTable("admission",
		judge,
		// Item 1: who speaks for a session.
		Entry("a send from a forged fromSessionKey", func() verdict {
			return denied(actAs("agent:main:main")+" (spec.fromSessionKey): only the operator or a user granted the verb act-as on agentsessions/",
				by(alice, sendObj(nsH, "agent:research:main", "agent:main:main")))
		}),
		Entry("a send from a session the user may act as", func() verdict {
			return allowed(by(alice, sendObj(nsH, "agent:main:main", "agent:research:main")))
		}),
		Entry("a send as the user herself", func() verdict { return allowed(by(alice, sendObj(nsH, "agent:research:main", ""))) }),
		Entry("a spawn from a forged requesterSessionKey", func() verdict {
			return denied(actAs("agent:main:main")+" (spec.requesterSessionKey)", by(alice, runObj(nsH, "agent:main:main", "research")))
		}),
		Entry("a child-key hint from a user", func() verdict {
			return denied(actAs("agent:research:subagent:0b6f9a3e-9999-4222-8333-444455556666"),
				by(alice, withChildKey("agent:research:subagent:0b6f9a3e-9999-4222-8333-444455556666", runObj(nsH, "", "research"))))
		}),
		Entry("a child-key hint naming an existing session", func() verdict {
			return denied("session "+existingChild+" already exists: a sub-agent always runs in a new session",
				by(manager, withChildKey(existingChild, runObj(nsH, "agent:main:main", "research"))))
		}),
		Entry("a child-key hint naming another agent's session", func() verdict {
			return denied("the child session key must be agent:research:subagent:<uuid>",
				by(manager, withChildKey("agent:main:main", runObj(nsH, "agent:main:main", "research"))))
		}),
		Entry("a session made ahead under a child key", func() verdict {
			return denied("sub-agent sessions are created only by the operator", by(alice,
				sessionObj(nsH, "agent:research:subagent:0b6f9a3e-8888-4222-8333-444455556666", "research")))
		}),
		Entry("a fresh child-key hint from the manager", func() verdict {
			return allowed(by(manager, withChildKey("agent:research:subagent:0b6f9a3e-7777-4222-8333-444455556666", runObj(nsH, "agent:main:main", "research"))))
		}),
		Entry("a not-yet-existing target denied by the send policy", func() verdict {
			return denied("send denied by sessionPolicy default rule 2 (keyPrefix=agent:ops: -> deny)", by(alice, sendObj(nsH, "agent:ops:main", "")))
		}),
		Entry("a not-yet-existing target another agent may not reach", func() verdict {
			return denied("agent:ops:main belongs to agent ops, which no spec.agentToAgent.allow glob",
				by(manager, withHops(1, sendObj(nsH, "agent:ops:main", "agent:research:main"))))
		}),
		// Item 2: Secrets.
		Entry("an Agent with a Secret its creator may not get", func() verdict {
			return denied(secretDenied("alice", "team-key"), by(alice, agentObj(nsH, "exfil", apiKey("team-key"))))
		}),
		Entry("an Agent with a Secret that does not exist, the same answer", func() verdict {
			return denied(secretDenied("alice", "no-such-key"), by(alice, agentObj(nsH, "exfil2", apiKey("no-such-key"))))
		}),
		Entry("an MCP server header from a Secret its creator may not get", func() verdict {
			return denied("spec.tools.mcpServers[0].headers[0].valueFrom.secretKeyRef: Forbidden: "+secretDenied("alice", "team-key"),
				by(alice, agentObj(nsH, "mcp-exfil", func(a *sessionsv1alpha1.Agent) {
					a.Spec.Tools.MCPServers = []sessionsv1alpha1.MCPServer{{Name: "files", URL: "http://127.0.0.1:9/mcp", Headers: []sessionsv1alpha1.MCPHeader{{Name: "Authorization",
						ValueFrom: sessionsv1alpha1.MCPHeaderSource{SecretKeyRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "team-key"}, Key: "apiKey"}}}}}}
				})))
		}),
		Entry("an Agent with an opted-in Secret", func() verdict {
			return allowed(by(alice, agentObj(nsH, "shared", apiKey("shared-key"))))
		}),
		Entry("an Agent repointed by an editor who may not get its Secret", func() verdict {
			return denied(secretDenied("alice", "team-key"), func() error {
				a := agentObj(nsH, "vouched", apiKey("team-key"))
				if err := k8s.Create(ctx, a); err != nil {
					return err
				}
				if got := a.Annotations[sessionsv1alpha1.VouchedSecretsAnnotation]; got != "team-key" {
					return errors.New("the admin's create did not vouch for team-key: " + got)
				}
				a = &sessionsv1alpha1.Agent{}
				if err := alice.Get(ctx, types.NamespacedName{Namespace: nsH, Name: "vouched"}, a); err != nil {
					return err
				}
				a.Spec.Model.BaseURL = "http://127.0.0.1:10/v1"
				return alice.Update(ctx, a)
			})
		}),
		Entry("a forged vouch is overwritten", func() verdict {
			return allowed(func() error {
				a := agentObj(nsH, "forged", apiKey("shared-key"))
				a.Annotations = map[string]string{sessionsv1alpha1.VouchedSecretsAnnotation: "team-key"}
				if err := alice.Create(ctx, a); err != nil {
					return err
				}
				if got, ok := a.Annotations[sessionsv1alpha1.VouchedSecretsAnnotation]; ok {
					return errors.New("the forged vouch survived: " + got)
				}
				return nil
			})
		}),
		Entry("the manager's write never vouches", func() verdict {
			return allowed(func() error {
				a := agentObj(nsH, "by-manager", apiKey("team-key"))
				if err := manager.Create(ctx, a); err != nil {
					return err
				}
				if got, ok := a.Annotations[sessionsv1alpha1.VouchedSecretsAnnotation]; ok {
					return errors.New("the manager, which may get every Secret, vouched: " + got)
				}
				return nil
			})
		}),
		Entry("a sink with a Secret its creator may not get", func() verdict {
			return denied(secretDenied("bob", "team-key"), by(bob, sinkPolicy(nsRate, "team-key")))
		}),
		// Item 6: owner-only and immutable.
		Entry("an editor writing the SessionPolicy", func() verdict {
			return denied(`cannot create resource "sessionpolicies"`, by(alice, sinkPolicy(nsRate, "shared-key")))
		}),
		Entry("a sendPolicy flip by update", func() verdict {
			return denied(`may not change spec.sendPolicy of session agent:main:discord:group:g1 ("" to "allow"): it overrides the SessionPolicy, so it needs the verb set-send-policy`,
				updateSession(alice, nsH, "agent:main:discord:group:g1", func(s *sessionsv1alpha1.AgentSession) { s.Spec.SendPolicy = sessionsv1alpha1.ActionAllow }))
		}),
		Entry("a sendPolicy flip by patch", func() verdict {
			return denied("needs the verb set-send-policy", func() error {
				s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: nsH, Name: sessionkey.ObjectName("agent:main:discord:group:g1")}}
				return alice.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"sendPolicy":"allow"}}`)))
			})
		}),
		Entry("a session created with a sendPolicy override", func() verdict {
			return denied("needs the verb set-send-policy", by(alice, sessionObj(nsH, "agent:main:discord:group:g2", "main",
				func(s *sessionsv1alpha1.AgentSession) { s.Spec.SendPolicy = sessionsv1alpha1.ActionAllow })))
		}),
		Entry("a sendPolicy flip by the namespace owner", func() verdict {
			return allowed(updateSession(bob, nsH, "agent:main:discord:group:g1", func(s *sessionsv1alpha1.AgentSession) { s.Spec.SendPolicy = sessionsv1alpha1.ActionAllow }))
		}),
		Entry("an agentId change", func() verdict {
			return denied("spec.agentId: Forbidden: agentId is immutable",
				updateSession(alice, nsH, "agent:main:webchat:group:boxed", func(s *sessionsv1alpha1.AgentSession) { s.Spec.AgentID = "ops" }))
		}),
		Entry("un-sandboxing a session", func() verdict {
			return denied("spec.sandboxed: Forbidden: only the operator un-sandboxes a session",
				updateSession(alice, nsH, "agent:main:webchat:group:boxed", func(s *sessionsv1alpha1.AgentSession) { s.Spec.Sandboxed = false }))
		}),
		// Item 5: chains.
		Entry("a hop count set by a user", func() verdict {
			return denied("annotation sessions.agents.dev/hops is set only by the operator's session tools",
				by(alice, withHops(1, sendObj(nsH, "agent:research:main", ""))))
		}),
		Entry("a tool-made send at the hop limit", func() verdict {
			return allowed(by(manager, withHops(3, sendObj(nsH, "agent:research:main", "agent:main:main"))))
		}),
		Entry("a tool-made send over the hop limit", func() verdict {
			return denied("hop limit: this is hop 4 of a chain of agent tool calls and SessionPolicy spec.limits.maxHops is 3; raise spec.limits.maxHops",
				by(manager, withHops(4, sendObj(nsH, "agent:research:main", "agent:main:main"))))
		}),
		Entry("a tool-made spawn over the hop limit", func() verdict {
			return denied("hop limit: this is hop 4", by(manager, withHops(4, runObj(nsH, "agent:main:main", "research"))))
		}),
	)

	It("limits the rate of tool-made sends and spawns per namespace", func() {
		for i := range 3 {
			Expect(manager.Create(ctx, withHops(1, sendObj(nsRate, "agent:main:webchat:direct:u1", "agent:main:main")))).To(Succeed(), "send %d", i)
		}
		err := manager.Create(ctx, withHops(1, runObj(nsRate, "agent:main:main", "")))
		Expect(err).To(MatchError(ContainSubstring("rate limit: this namespace's agent tools may create 3 SessionSends and SubagentRuns per minute (SessionPolicy spec.limits.toolCreatesPerMinute); wait, or raise")))
		By("a person's send is not a tool call and is not limited")
		Expect(k8s.Create(ctx, sendObj(nsRate, "agent:main:webchat:direct:u1", ""))).To(Succeed())
		By("another namespace has its own bucket")
		Expect(manager.Create(ctx, withHops(1, sendObj(nsH, "agent:research:main", "agent:main:main")))).To(Succeed())
	})

	It("lets an editor cancel sends and runs, and change nothing else of them", func() {
		send, run := sendObj(nsH, "agent:research:main", ""), runObj(nsH, "", "research")
		Expect(alice.Create(ctx, send)).To(Succeed())
		Expect(alice.Create(ctx, run)).To(Succeed())
		patch := func(obj client.Object, body string) error {
			return alice.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body)))
		}
		for _, change := range []struct {
			obj  client.Object
			body string
		}{
			{send, `{"spec":{"message":"something else"}}`},
			{send, `{"spec":{"cancel":true,"timeoutSeconds":0}}`},
			{send, `{"spec":{"fromSessionKey":"agent:research:main"}}`},
			{run, `{"spec":{"task":"something else"}}`},
			{run, `{"spec":{"cancel":true,"thinking":"high"}}`},
			{run, `{"spec":{"attachments":[{"name":"f","content":"x"}]}}`},
		} {
			Expect(patch(change.obj, change.body)).To(MatchError(ContainSubstring("spec is immutable but for cancel")),
				"%T %s", change.obj, change.body)
		}
		for _, obj := range []client.Object{send, run} {
			Expect(sessiontools.Cancel(ctx, alice, obj)).To(Succeed(), "cancel %T", obj)
			Expect(patch(obj, `{"spec":{"cancel":false}}`)).To(MatchError(ContainSubstring("spec.cancel cannot go back to false")))
		}
		Expect(send.Spec.Cancel && run.Spec.Cancel).To(BeTrue())
	})
})
