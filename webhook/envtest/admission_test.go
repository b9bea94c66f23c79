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
	"encoding/base64"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// Namespaces of the table: "all" has visibility all with agentToAgent allowing research;
// "tree" keeps the default visibility tree.
var nsAll, nsTree string

const researchSessionID = "0b6f9a3e-research-main"

func agentObj(ns, name string, mut ...func(*sessionsv1alpha1.Agent)) *sessionsv1alpha1.Agent {
	a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}}}
	for _, m := range mut {
		m(a)
	}
	return a
}

func sessionObj(ns, key, agentID string, mut ...func(*sessionsv1alpha1.AgentSession)) *sessionsv1alpha1.AgentSession {
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: ns},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agentID}}
	for _, m := range mut {
		m(s)
	}
	return s
}

func sendObj(ns, target, from string) *sessionsv1alpha1.SessionSend {
	return &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{GenerateName: "send-", Namespace: ns},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: target, Message: "hello", FromSessionKey: from}}
}

func runObj(ns, requester, agentID string, mut ...func(*sessionsv1alpha1.SubagentRun)) *sessionsv1alpha1.SubagentRun {
	r := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{GenerateName: "run-", Namespace: ns},
		Spec: sessionsv1alpha1.SubagentRunSpec{Task: "look it up", AgentID: agentID, RequesterSessionKey: requester}}
	for _, m := range mut {
		m(r)
	}
	return r
}

// spawnedByMain marks a session as a sub-agent of agent:main:main.
func spawnedByMain(s *sessionsv1alpha1.AgentSession) { s.Spec.SpawnedBy = "agent:main:main" }

// fixtures creates the agents, sessions and policies the table judges against, and waits
// until the webhooks' cache holds them.
func fixtures() {
	for _, ns := range []*string{&nsAll, &nsTree} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "wh-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		*ns = n.Name
		objs := []client.Object{
			agentObj(n.Name, "main", func(a *sessionsv1alpha1.Agent) { a.Spec.Subagents.AllowAgents = []string{"research"} }),
			agentObj(n.Name, "research", func(a *sessionsv1alpha1.Agent) { a.Spec.AllowedModels = []string{"small"} }),
			agentObj(n.Name, "ops"),
			agentObj(n.Name, "box", func(a *sessionsv1alpha1.Agent) { a.Spec.Sandbox.Enabled = true }),
			sessionObj(n.Name, "agent:main:main", "main"),
			sessionObj(n.Name, "agent:main:discord:group:g1", "main"),
			sessionObj(n.Name, "agent:main:discord:group:vip", "main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.SendPolicy = sessionsv1alpha1.ActionAllow }),
			sessionObj(n.Name, "agent:main:webchat:group:optout", "main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.SendPolicy = sessionsv1alpha1.ActionDeny }),
			sessionObj(n.Name, "agent:main:webchat:group:busy", "main"),
			sessionObj(n.Name, "agent:research:main", "research"),
			sessionObj(n.Name, "agent:box:main", "box", func(s *sessionsv1alpha1.AgentSession) { s.Spec.Sandboxed = true }),
		}
		for _, o := range objs {
			Expect(k8s.Create(ctx, o)).To(Succeed(), "%T %s", o, o.GetName())
		}
		child := sessionObj(n.Name, "agent:main:subagent:c1", "main", spawnedByMain)
		Expect(manager.Create(ctx, child)).To(Succeed())
		research := &sessionsv1alpha1.AgentSession{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: n.Name, Name: sessionkey.ObjectName("agent:research:main")}, research)).To(Succeed())
		research.Status.SessionID = researchSessionID
		Expect(k8s.Status().Update(ctx, research)).To(Succeed())
	}
	Expect(k8s.Create(ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: nsAll}, Spec: sessionsv1alpha1.SessionPolicySpec{
		SendPolicy:   sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{Channel: "discord", ChatType: sessionsv1alpha1.ChatTypeGroup}, Action: sessionsv1alpha1.ActionDeny}}},
		AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"research"}},
		Visibility:   sessionsv1alpha1.VisibilityAll,
		Attachments:  &sessionsv1alpha1.AttachmentLimits{MaxCount: ptr.To[int32](3)},
	}})).To(Succeed())
	// Five active runs of the busy session: the next one is over maxChildren.
	for range 5 {
		Expect(k8s.Create(ctx, runObj(nsAll, "agent:main:webchat:group:busy", ""))).To(Succeed())
	}
	Eventually(func(g Gomega) {
		var runs sessionsv1alpha1.SubagentRunList
		g.Expect(cached.List(ctx, &runs, client.InNamespace(nsAll))).To(Succeed())
		g.Expect(runs.Items).To(HaveLen(5))
		var ss sessionsv1alpha1.AgentSessionList
		g.Expect(cached.List(ctx, &ss, client.InNamespace(nsTree))).To(Succeed())
		g.Expect(ss.Items).To(HaveLen(8))
		var p sessionsv1alpha1.SessionPolicy
		g.Expect(cached.Get(ctx, client.ObjectKey{Namespace: nsAll, Name: "default"}, &p)).To(Succeed())
		var research sessionsv1alpha1.AgentSession
		g.Expect(cached.Get(ctx, client.ObjectKey{Namespace: nsAll, Name: sessionkey.ObjectName("agent:research:main")}, &research)).To(Succeed())
		g.Expect(research.Status.SessionID).To(Equal(researchSessionID))
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
}

// verdict is one admission case: the call, and "" when it must be allowed or a piece of the
// denial's text.
type verdict struct {
	call func() error
	deny string
}

func allowed(call func() error) verdict             { return verdict{call: call} }
func denied(deny string, call func() error) verdict { return verdict{call: call, deny: deny} }

// judge runs one case and checks its verdict.
func judge(v func() verdict) {
	c := v()
	err := c.call()
	if c.deny == "" {
		Expect(err).NotTo(HaveOccurred())
		return
	}
	Expect(err).To(HaveOccurred())
	Expect(err.Error()).To(ContainSubstring(c.deny))
}

func create(o client.Object) func() error { return func() error { return k8s.Create(ctx, o) } }

var _ = Describe("admission", Ordered, func() {
	BeforeAll(fixtures)

	b64 := base64.StdEncoding.EncodeToString
	att := func(names ...string) func(*sessionsv1alpha1.SubagentRun) {
		return func(r *sessionsv1alpha1.SubagentRun) {
			for _, n := range names {
				r.Spec.Attachments = append(r.Spec.Attachments, sessionsv1alpha1.Attachment{Name: n, Content: "x"})
			}
		}
	}

	DescribeTable("judges each object",
		judge,
		// SessionSend: target, visibility, send policy.
		Entry("send across agents allowed by agentToAgent", func() verdict { return allowed(create(sendObj(nsAll, "agent:research:main", "agent:main:main"))) }),
		Entry("send into a Discord group denied by rule 1", func() verdict {
			return denied("send denied by sessionPolicy default rule 1 (channel=discord, chatType=group -> deny); set spec.sendPolicy=allow on the session or change the rule",
				create(sendObj(nsAll, "agent:main:discord:group:g1", "agent:main:main")))
		}),
		Entry("a session's allow overrides the deny rule", func() verdict {
			return allowed(create(sendObj(nsAll, "agent:main:discord:group:vip", "agent:main:main")))
		}),
		Entry("a person's send into the vip group", func() verdict { return allowed(create(sendObj(nsAll, "agent:main:discord:group:vip", ""))) }),
		Entry("a session's deny overrides everything", func() verdict {
			return denied("session's spec.sendPolicy=deny", create(sendObj(nsAll, "agent:main:webchat:group:optout", "agent:main:main")))
		}),
		Entry("a person's send", func() verdict { return allowed(create(sendObj(nsAll, "agent:research:main", ""))) }),
		Entry("a target that does not exist", func() verdict {
			return denied(`spec.sessionKey: Not found: "agent:main:telegram:group:none"`, create(sendObj(nsAll, "agent:main:telegram:group:none", "agent:main:main")))
		}),
		Entry("main resolves to the requester's main session", func() verdict { return allowed(create(sendObj(nsAll, "main", "agent:research:main"))) }),
		Entry("main without a requester", func() verdict {
			return denied(lookup.ErrMainWithoutRequester.Error(), create(sendObj(nsAll, "main", "")))
		}),
		Entry("the main session of an existing Agent, not created yet", func() verdict { return allowed(create(sendObj(nsAll, "agent:ops:main", ""))) }),
		Entry("a requester that does not exist", func() verdict {
			return denied("spec.fromSessionKey: Not found", create(sendObj(nsAll, "agent:research:main", "agent:ghost:main")))
		}),
		Entry("another agent not in agentToAgent.allow", func() verdict {
			return denied("no spec.agentToAgent.allow glob", create(sendObj(nsAll, "agent:main:main", "agent:research:main")))
		}),
		Entry("a target named by its sessionId", func() verdict { return allowed(create(sendObj(nsAll, researchSessionID, "agent:main:main"))) }),
		Entry("into the requester's own sub-agent", func() verdict { return allowed(create(sendObj(nsAll, "agent:main:subagent:c1", "agent:main:main"))) }),
		Entry("a sub-agent to its own agent's main session", func() verdict { return allowed(create(sendObj(nsAll, "agent:main:main", "agent:main:subagent:c1"))) }),
		Entry("a sandboxed session is clamped to tree", func() verdict {
			return denied("visibility tree", create(sendObj(nsAll, "agent:main:main", "agent:box:main")))
		}),
		Entry("visibility tree hides another agent", func() verdict {
			return denied("visibility tree", create(sendObj(nsTree, "agent:research:main", "agent:main:main")))
		}),
		Entry("visibility tree shows the spawned session", func() verdict { return allowed(create(sendObj(nsTree, "agent:main:subagent:c1", "agent:main:main"))) }),
		// SubagentRun: spawn guards and defaults.
		Entry("spawn under an allowed agent", func() verdict { return allowed(create(runObj(nsAll, "agent:main:main", "research"))) }),
		Entry("spawn under an agent not in allowAgents", func() verdict {
			return denied(`add "ops" (or "*") to Agent main spec.subagents.allowAgents`, create(runObj(nsAll, "agent:main:main", "ops")))
		}),
		Entry("spawn under the requester's own agent", func() verdict { return allowed(create(runObj(nsAll, "agent:main:main", ""))) }),
		Entry("a sub-agent may not spawn", func() verdict {
			return denied("sub-agents may not spawn", create(runObj(nsAll, "agent:main:subagent:c1", "")))
		}),
		Entry("a model the target does not allow", func() verdict {
			return denied("spec.model: Unsupported value", create(runObj(nsAll, "agent:main:main", "research", func(r *sessionsv1alpha1.SubagentRun) { r.Spec.Model = "huge" })))
		}),
		Entry("an allowed model", func() verdict {
			return allowed(create(runObj(nsAll, "agent:main:main", "research", func(r *sessionsv1alpha1.SubagentRun) { r.Spec.Model = "small" })))
		}),
		Entry("sandbox require with an unsandboxed target", func() verdict {
			return denied("sandbox require", create(runObj(nsAll, "agent:main:main", "research", func(r *sessionsv1alpha1.SubagentRun) { r.Spec.Sandbox = sessionsv1alpha1.SandboxRequire })))
		}),
		Entry("a sandboxed requester and an unsandboxed child", func() verdict {
			return denied("may only spawn sandboxed children", create(runObj(nsAll, "agent:box:main", "research")))
		}),
		Entry("more attachments than the policy allows", func() verdict {
			return denied("spec.attachments: Too many: 4: must have at most 3 items", create(runObj(nsAll, "agent:main:main", "", att("a", "b", "c", "d"))))
		}),
		Entry("three attachments", func() verdict { return allowed(create(runObj(nsAll, "agent:main:main", "", att("a", "b", "c")))) }),
		Entry("an attachment name with a path", func() verdict {
			return denied("spec.attachments[0].name", create(runObj(nsAll, "agent:main:main", "", att("../escape"))))
		}),
		Entry("an attachment that is not base64", func() verdict {
			return denied("not valid base64", create(runObj(nsAll, "agent:main:main", "", func(r *sessionsv1alpha1.SubagentRun) {
				r.Spec.Attachments = []sessionsv1alpha1.Attachment{{Name: "a", Content: b64([]byte("hi")) + "!", Encoding: sessionsv1alpha1.EncodingBase64}}
			})))
		}),
		Entry("an attachAs hint outside the workspace", func() verdict {
			return denied(`spec.attachAs.mountPath: Invalid value: "../up": must stay inside the workspace`, create(runObj(nsAll, "", "research",
				func(r *sessionsv1alpha1.SubagentRun) {
					r.Spec.AttachAs = &sessionsv1alpha1.AttachAs{MountPath: "../up"}
				})))
		}),
		Entry("an attachAs hint inside the workspace, recorded", func() verdict {
			r := runObj(nsAll, "", "research", func(r *sessionsv1alpha1.SubagentRun) {
				r.Spec.AttachAs = &sessionsv1alpha1.AttachAs{MountPath: "inputs/data"}
			})
			return allowed(func() error {
				if err := k8s.Create(ctx, r); err != nil {
					return err
				}
				got := &sessionsv1alpha1.SubagentRun{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(r), got); err != nil {
					return err
				}
				if got.Spec.AttachAs == nil || got.Spec.AttachAs.MountPath != "inputs/data" {
					return fmt.Errorf("spec.attachAs %+v, want inputs/data kept", got.Spec.AttachAs)
				}
				return nil
			})
		}),
		Entry("an agent that does not exist", func() verdict {
			return denied(`spec.agentId: Not found: "ghost"`, create(runObj(nsAll, "", "ghost")))
		}),
		Entry("a requester that does not exist", func() verdict {
			return denied("spec.requesterSessionKey: Not found", create(runObj(nsAll, "agent:main:nowhere", "research")))
		}),
		Entry("a sixth active child", func() verdict {
			return denied("maxChildren (5)", create(runObj(nsAll, "agent:main:webchat:group:busy", "")))
		}),
		Entry("thread defaults mode to session", func() verdict {
			r := runObj(nsAll, "", "research", func(r *sessionsv1alpha1.SubagentRun) { r.Spec.Thread = true })
			return allowed(func() error {
				if err := k8s.Create(ctx, r); err != nil {
					return err
				}
				if r.Spec.Mode != sessionsv1alpha1.ModeSession {
					return fmt.Errorf("mode %q, want session", r.Spec.Mode)
				}
				return nil
			})
		}),
		Entry("mode defaults to run", func() verdict {
			r := runObj(nsAll, "", "research")
			return allowed(func() error {
				if err := k8s.Create(ctx, r); err != nil {
					return err
				}
				if r.Spec.Mode != sessionsv1alpha1.ModeRun {
					return fmt.Errorf("mode %q, want run", r.Spec.Mode)
				}
				return nil
			})
		}),
		// AgentSession: grammar, reserved keys, uniqueness, spawnedBy.
		Entry("the reserved key global", func() verdict {
			return denied("global and unknown are reserved", create(&sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: nsAll}, Spec: sessionsv1alpha1.AgentSessionSpec{Key: "global", AgentID: "main"}}))
		}),
		Entry("the reserved key unknown", func() verdict {
			return denied("global and unknown are reserved", create(&sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "u", Namespace: nsAll}, Spec: sessionsv1alpha1.AgentSessionSpec{Key: "unknown", AgentID: "main"}}))
		}),
		Entry("a key outside the grammar", func() verdict { return denied("spec.key", create(sessionObj(nsAll, "agent::main", "main"))) }),
		Entry("a key another session has", func() verdict {
			return denied("spec.key: Duplicate value", create(&sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: nsAll}, Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:main", AgentID: "main"}}))
		}),
		Entry("spawnedBy set by a person", func() verdict {
			return denied("only the operator sets spawnedBy", create(sessionObj(nsAll, "agent:main:subagent:c2", "main", spawnedByMain)))
		}),
		Entry("spawnedBy set by the manager", func() verdict {
			return allowed(func() error {
				return manager.Create(ctx, sessionObj(nsAll, "agent:main:subagent:c3", "main", spawnedByMain))
			})
		}),
		Entry("an agentId the key does not name", func() verdict {
			return denied("the key belongs to agent ops", create(sessionObj(nsAll, "agent:ops:telegram:group:x", "main")))
		}),
		Entry("a new group session", func() verdict { return allowed(create(sessionObj(nsAll, "agent:main:telegram:group:new", "main"))) }),
		Entry("a person changing spawnedBy", func() verdict {
			return denied("only the operator sets spawnedBy", func() error {
				s := &sessionsv1alpha1.AgentSession{}
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: nsAll, Name: sessionkey.ObjectName("agent:main:subagent:c1")}, s); err != nil {
					return err
				}
				s.Spec.SpawnedBy = "agent:research:main"
				return k8s.Update(ctx, s)
			})
		}),
		Entry("a person changing the display name", func() verdict {
			return allowed(func() error {
				s := &sessionsv1alpha1.AgentSession{}
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: nsAll, Name: sessionkey.ObjectName("agent:main:subagent:c1")}, s); err != nil {
					return err
				}
				s.Spec.DisplayName = "child"
				return k8s.Update(ctx, s)
			})
		}),
		// SessionPolicy and Agent.
		Entry("a glob that does not compile", func() verdict {
			return denied("spec.agentToAgent.allow[0]", create(&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: nsTree},
				Spec: sessionsv1alpha1.SessionPolicySpec{AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"ops-["}}}}))
		}),
		Entry("a valid policy", func() verdict {
			return allowed(create(&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: nsTree},
				Spec: sessionsv1alpha1.SessionPolicySpec{AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"ops-*"}}}}))
		}),
		Entry("allowAgents naming no agent id", func() verdict {
			return denied("spec.subagents.allowAgents[0]", create(agentObj(nsAll, "badallow", func(a *sessionsv1alpha1.Agent) { a.Spec.Subagents.AllowAgents = []string{"Bad Agent"} })))
		}),
		Entry("a script rule that does not compile", func() verdict {
			return denied("spec.model.script[0].match", create(agentObj(nsAll, "badscript", func(a *sessionsv1alpha1.Agent) { a.Spec.Model.Script = []sessionsv1alpha1.ScriptRule{{Match: "(["}} })))
		}),
		Entry("an anthropic agent without a key", func() verdict {
			return denied("apiKeySecretRef is required for the anthropic provider", create(agentObj(nsAll, "claude", func(a *sessionsv1alpha1.Agent) {
				a.Spec.Model = sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderAnthropic, Name: "m"}
			})))
		}),
		Entry("an openai-compatible agent without a key (Ollama, vLLM)", func() verdict {
			return allowed(create(agentObj(nsAll, "ollama", func(a *sessionsv1alpha1.Agent) {
				a.Spec.Model = sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderOpenAI, Name: "llama3", BaseURL: "http://ollama:11434/v1"}
			})))
		}),
		Entry("a valid agent", func() verdict {
			return allowed(create(agentObj(nsAll, "good", func(a *sessionsv1alpha1.Agent) { a.Spec.Subagents.AllowAgents = []string{"*"} })))
		}),
	)
})
