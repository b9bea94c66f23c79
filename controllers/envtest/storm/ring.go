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

// Package storm runs agents that call each other on every input through the whole manager:
// controllers, the turn engine on the scripted provider and the admission webhooks behind a
// real API server, the manager speaking as its own user so the webhook tells its tool-made
// objects from a person's; and across the wire, through the real transcript-store's /a2a
// and /mcp doors, which the agents' A2A and MCP tools call with tokens of their own.
//
// Its suite runs them on envtest with the manager in-process; the rings, their agents and
// what a stopped storm must show (Cluster) are shared with the e2e suite, which runs the
// same storms on the built binaries that make run-local starts.
package storm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// Audience is what the doors ask of callers' tokens.
const Audience = "agent-sessions"

// TokenSecret holds the Authorization header the agents' tools call the doors with.
const TokenSecret = "door-token"

// Settled is how long a storm's count must stay the same to have stopped: a scripted turn
// takes milliseconds, so a storm still going adds sends well within it.
const Settled = 3 * time.Second

// Cluster is where storms run: an admin client that reads uncached, the config tokens are
// asked with, and the doors.
type Cluster struct {
	Client client.Client
	Config *rest.Config
	// Doors is the transcript-store's public listener, https://host:port: /a2a/ and /mcp.
	Doors string
}

var ctx = context.Background()

// AgentOf makes the agent name of a ring in ns whose next agent is next.
type AgentOf func(ns, name, next string) *sessionsv1alpha1.Agent

// DoorCaller is what the agents' tools need to call the doors of ns: a ServiceAccount
// allowed the namespace (its token, for the doors' audience, in TokenSecret, which any
// Agent of the namespace may use).
func (c *Cluster) DoorCaller(ns string) []client.Object {
	return []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: TokenSecret, Namespace: ns,
		Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
		StringData: map[string]string{"authorization": "Bearer " + c.TokenOf(ns, "caller")}}}
}

// TokenOf makes the ServiceAccount sa of ns, allowed everything in ns, and returns a token
// of it for the doors' audience.
func (c *Cluster) TokenOf(ns, sa string) string {
	gomega.Expect(c.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}})).To(gomega.Succeed())
	gomega.Expect(c.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}})).To(gomega.Succeed())
	cs, err := kubernetes.NewForConfig(c.Config)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{Audience}}}, metav1.CreateOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return tr.Status.Token
}

// Authorization is the agents' tools' header to the doors, from TokenSecret.
var Authorization = []sessionsv1alpha1.MCPHeader{{Name: "Authorization", ValueFrom: sessionsv1alpha1.MCPHeaderSource{
	SecretKeyRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: TokenSecret}, Key: "authorization"}}}}

// CallsOnAnyInput is a scripted agent that answers every input by calling tool with args
// and replying with what it returned.
func CallsOnAnyInput(tool string, args any) *sessionsv1alpha1.Agent {
	raw, err := json.Marshal(args)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return &sessionsv1alpha1.Agent{Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted,
		Script: []sessionsv1alpha1.ScriptRule{{Match: "^", Reply: "{{toolResults}}",
			ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: tool, Arguments: &runtime.RawExtension{Raw: raw}}}}}}}}
}

// A2APeer is an agent whose remote A2A agent "peer" is the next agent of the ring, reached
// at base (the doors, or a relay in front of them), and which calls it on every input.
func A2APeer(base string) AgentOf {
	return func(ns, _, next string) *sessionsv1alpha1.Agent {
		a := CallsOnAnyInput("a2a__peer", map[string]string{"message": "{{input}}"})
		a.Spec.Tools.A2AAgents = []sessionsv1alpha1.A2AAgent{{Name: "peer", URL: base + "/a2a/" + ns + "/" + next, Headers: Authorization}}
		return a
	}
}

// MCPPeer is an agent whose MCP server "door" is /mcp of its namespace, and which sends
// the next agent's main session every input through its sessions_send, fire-and-forget.
func (c *Cluster) MCPPeer(ns, _, next string) *sessionsv1alpha1.Agent {
	a := CallsOnAnyInput("mcp__door__sessions_send", map[string]any{"sessionKey": sessionkey.MainKey(next), "message": "{{input}}", "timeoutSeconds": 0})
	a.Spec.Tools.MCPServers = []sessionsv1alpha1.MCPServer{{Name: "door", URL: c.Doors + "/mcp?namespace=" + ns, Headers: Authorization}}
	return a
}

// StormOf makes a namespace whose agents call on around the ring (a→b→a, or a→b→c→a)
// under policy p (visibility and agent-to-agent opened), with objects made first (what the
// agents' tools need) and each agent made by agent; it seeds it with one person's send to
// the ring's first, waits until the count of SessionSends stops growing and returns the
// seed and every send.
func (c *Cluster) StormOf(p *sessionsv1alpha1.SessionPolicySpec, first func(ns string) []client.Object, agent AgentOf,
	ring ...string) (*sessionsv1alpha1.SessionSend, []sessionsv1alpha1.SessionSend) {
	ns := c.RingOf(p, first, agent, ring...)
	seed := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "seed", Namespace: ns},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: sessionkey.MainKey(ring[0]), Message: "go", TimeoutSeconds: ptr.To[int32](0)}}
	gomega.Expect(c.Client.Create(ctx, seed)).To(gomega.Succeed())
	sends := c.Settle(ns, nil)
	gomega.Expect(c.Client.Get(ctx, client.ObjectKeyFromObject(seed), seed)).To(gomega.Succeed())
	return seed, sends
}

// RingOf makes a namespace for a ring of agents, as StormOf says, and returns it once
// their main sessions are ready.
func (c *Cluster) RingOf(p *sessionsv1alpha1.SessionPolicySpec, first func(ns string) []client.Object, agent AgentOf, ring ...string) string {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "storm-"}}
	gomega.Expect(c.Client.Create(ctx, n)).To(gomega.Succeed())
	ns := n.Name
	spec := *p
	spec.Visibility, spec.AgentToAgent = sessionsv1alpha1.VisibilityAll, sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}}
	var objs []client.Object
	if first != nil {
		objs = first(ns)
	}
	objs = append(objs, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}, Spec: spec})
	for i, a := range ring {
		key := sessionkey.MainKey(a)
		ag := agent(ns, a, ring[(i+1)%len(ring)])
		ag.Name, ag.Namespace = a, ns
		objs = append(objs, ag,
			&sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: ns},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: a}})
	}
	for _, o := range objs {
		gomega.Expect(c.Client.Create(ctx, o)).To(gomega.Succeed(), "%T %s", o, o.GetName())
	}
	gomega.Eventually(func(g gomega.Gomega) {
		for _, a := range ring {
			var s sessionsv1alpha1.AgentSession
			g.Expect(c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: sessionkey.ObjectName(sessionkey.MainKey(a))}, &s)).To(gomega.Succeed())
			g.Expect(s.Status.SessionID).NotTo(gomega.BeEmpty())
		}
	}, testenv.Timeout, testenv.Interval).Should(gomega.Succeed())
	return ns
}

// Settle waits until the storm in ns has stopped (every send finished, done too when
// given, and no new send comes) and returns its sends.
func (c *Cluster) Settle(ns string, done func(g gomega.Gomega)) []sessionsv1alpha1.SessionSend {
	count := func() int {
		var l sessionsv1alpha1.SessionSendList
		gomega.Expect(c.Client.List(ctx, &l, client.InNamespace(ns))).To(gomega.Succeed())
		return len(l.Items)
	}
	gomega.Eventually(func(g gomega.Gomega) {
		var l sessionsv1alpha1.SessionSendList
		g.Expect(c.Client.List(ctx, &l, client.InNamespace(ns))).To(gomega.Succeed())
		g.Expect(len(l.Items)).To(gomega.BeNumerically(">", 1), "the storm never started")
		for _, s := range l.Items {
			g.Expect(sessionsv1alpha1.Finished(s.Status.Conditions)).To(gomega.BeTrue(), "send %s still running", s.Name)
		}
		if done != nil {
			done(g)
		}
		n := len(l.Items)
		g.Consistently(count, Settled, testenv.Interval).Should(gomega.Equal(n))
	}, testenv.Timeout, testenv.Interval).Should(gomega.Succeed(), func() string { return c.Dump(ns) })
	var l sessionsv1alpha1.SessionSendList
	gomega.Expect(c.Client.List(ctx, &l, client.InNamespace(ns))).To(gomega.Succeed())
	return l.Items
}

// Dump is what a storm that did not stop left: its sends and its agents' tools.
func (c *Cluster) Dump(ns string) string {
	var b strings.Builder
	var sends sessionsv1alpha1.SessionSendList
	_ = c.Client.List(ctx, &sends, client.InNamespace(ns))
	for _, s := range sends.Items {
		fmt.Fprintf(&b, "send %s to %s: %s %q %q\n", s.Name, s.Spec.SessionKey, s.Status.Status, s.Status.Error, s.Status.Reply)
	}
	var agents sessionsv1alpha1.AgentList
	_ = c.Client.List(ctx, &agents, client.InNamespace(ns))
	for _, a := range agents.Items {
		fmt.Fprintf(&b, "agent %s: a2a %+v mcp %+v\n", a.Name, a.Status.A2AAgents, a.Status.MCPServers)
	}
	return b.String()
}

// Replies are every turn's reply of the sends: their tool results, as the model saw them.
func Replies(sends []sessionsv1alpha1.SessionSend) string {
	var b strings.Builder
	for _, s := range sends {
		b.WriteString(s.Status.Reply + "\n")
		for _, t := range s.Status.Turns {
			b.WriteString(t.Reply + "\n")
		}
	}
	return b.String()
}

// ChainEvents are the notes of the ChainLimitReached Events about o.
func (c *Cluster) ChainEvents(g gomega.Gomega, o client.Object) []string {
	var list eventsv1.EventList
	g.Expect(c.Client.List(ctx, &list, client.InNamespace(o.GetNamespace()))).To(gomega.Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.UID == o.GetUID() && e.Reason == "ChainLimitReached" {
			out = append(out, e.Note)
		}
	}
	return out
}

// ExpectStoppedAcrossWire checks a finished storm whose sends went through the doors: every
// send but the seed arrived carrying the seed's chain, the count is within the bound the
// same ring has in one cluster, the model was told the limit and that the chain crossed
// the wire, and the seed got one Event naming the limit.
func (c *Cluster) ExpectStoppedAcrossWire(name string, seed *sessionsv1alpha1.SessionSend, sends []sessionsv1alpha1.SessionSend, bound int, limit string) {
	ginkgo.GinkgoWriter.Printf("%s: %d SessionSends when it stopped (limit %d)\n", name, len(sends), bound)
	ginkgo.AddReportEntry(name, fmt.Sprintf("%d SessionSends", len(sends)))
	gomega.Expect(len(sends)).To(gomega.BeNumerically("<=", bound))
	gomega.Expect(len(sends)).To(gomega.BeNumerically(">", 2), "the storm never crossed the wire twice")
	for _, s := range sends {
		if s.Name == seed.Name {
			continue
		}
		carried, err := policy.CarriedOf(s.Annotations)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(carried).NotTo(gomega.BeNil(), "send %s carries no chain", s.Name)
		gomega.Expect(carried.ID).To(gomega.Equal(string(seed.UID)), "send %s", s.Name)
	}
	text := Replies(sends)
	gomega.Expect(text).To(gomega.ContainSubstring("chain limit reached:"))
	gomega.Expect(text).To(gomega.ContainSubstring("spec.limits." + limit))
	gomega.Expect(text).To(gomega.ContainSubstring("crossed the wire"))
	gomega.Eventually(func(g gomega.Gomega) {
		g.Expect(c.ChainEvents(g, seed)).To(gomega.ConsistOf(gomega.ContainSubstring("spec.limits." + limit)))
	}, testenv.Timeout, testenv.Interval).Should(gomega.Succeed())
}

// RunTreeOverA2A runs a SubagentRun of agent a whose ring (a, b) delegates over A2A (at
// base: the doors) under a perRun budget of maxTurns, pairs allowed to repeat, and
// checks that the budget stopped the tree counting both sides' turns: the run finished,
// every door-made send carried the chain, the turns of the run and of every send stay
// within maxTurns, and the model was told the budget ran out across the wire. It returns
// the run, the turns counted and the door-made sends.
func (c *Cluster) RunTreeOverA2A(base string, maxTurns int32) (*sessionsv1alpha1.SubagentRun, int64, []sessionsv1alpha1.SessionSend) {
	ns := c.RingOf(&sessionsv1alpha1.SessionPolicySpec{
		Limits:  &sessionsv1alpha1.ChainLimits{MaxPairRepeats: ptr.To[int32](1000)},
		Budgets: &sessionsv1alpha1.Budgets{PerRun: &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTurns: ptr.To(maxTurns)}}}},
		c.DoorCaller, A2APeer(base), "a", "b")
	run := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: ns},
		Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "a", Task: "go"}}
	gomega.Expect(c.Client.Create(ctx, run)).To(gomega.Succeed())
	sends := c.Settle(ns, func(g gomega.Gomega) {
		g.Expect(c.Client.Get(ctx, client.ObjectKeyFromObject(run), run)).To(gomega.Succeed())
		g.Expect(sessionsv1alpha1.Finished(run.Status.Conditions)).To(gomega.BeTrue(), "run still running")
	})
	turns := int64(0)
	if run.Status.Usage != nil {
		turns = run.Status.Usage.Turns
	}
	for _, s := range sends {
		gomega.Expect(s.Annotations).To(gomega.HaveKey(sessionsv1alpha1.CarriedChainAnnotation), "send %s", s.Name)
		if s.Status.Usage != nil {
			turns += s.Status.Usage.Turns
		}
	}
	name := fmt.Sprintf("run tree over A2A, perRun maxTurns %d", maxTurns)
	ginkgo.GinkgoWriter.Printf("%s: %d turns on both sides, %d door-made sends\n", name, turns, len(sends))
	ginkgo.AddReportEntry(name, fmt.Sprintf("%d turns, %d sends", turns, len(sends)))
	gomega.Expect(turns).To(gomega.BeNumerically("<=", maxTurns))
	gomega.Expect(Replies(sends)).To(gomega.ContainSubstring("budget exceeded: the budget above this chain has no turn left"))
	gomega.Expect(Replies(sends)).To(gomega.ContainSubstring("crossed the wire"))
	return run, turns, sends
}
