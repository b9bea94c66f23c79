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
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// Turns belong to their object: deleting it or setting spec.cancel stops its model calls.
var _ = Describe("Turns owned by their object", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		slow := sessionsv1alpha1.ScriptRule{Match: "^slow", Reply: "late", Delay: &metav1.Duration{Duration: 10 * time.Minute}}
		createAgent(ns, "main", rule("^Sub-agent announce step", sessionsv1alpha1.AnnounceSkip))
		createAgent(ns, "research", slow)
		createAgent(ns, "bob", slow)
		createSession(ns, "agent:main:main", "main")
		createSession(ns, "agent:bob:main", "bob")
	})

	It("stops the model call of a send deleted in the middle of its turn and forgets it", func() {
		input := "slow thoughts for " + ns
		send := waitSend(createSend(ns, "agent:bob:main", input, 0, ""), func(g Gomega, s *sessionsv1alpha1.SessionSend) {
			g.Expect(s.Status.Status).To(Equal(sessionsv1alpha1.SendAccepted))
		})
		Eventually(func() bool { started, _ := calls.state(input); return started }, testenv.Timeout, testenv.Interval).Should(BeTrue())
		owner := turns.Owner{Kind: turns.OwnerSessionSend, NamespacedName: client.ObjectKeyFromObject(send)}
		Expect(engine.Holds(owner)).To(BeTrue())

		Expect(k8s.Delete(ctx, send)).To(Succeed())
		Eventually(func() bool { _, cancelled := calls.state(input); return cancelled }, testenv.Timeout, testenv.Interval).
			Should(BeTrue(), "the model call's context was not cancelled")
		Eventually(func() bool { return engine.Holds(owner) }, testenv.Timeout, testenv.Interval).Should(BeFalse())
	})

	It("cancels a running run, its grandchild too, and still announces to the requester", func() {
		task := "slow research for " + ns
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: task, AgentID: "research", RequesterSessionKey: "agent:main:main"}),
			func(g Gomega, r *sessionsv1alpha1.SubagentRun) {
				g.Expect(r.Status.Phase).To(Equal(sessionsv1alpha1.RunRunning))
			})
		grandTask := "slow digging for " + ns
		grandchild := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: grandTask, AgentID: "research", RequesterSessionKey: run.Status.ChildSessionKey}),
			func(g Gomega, r *sessionsv1alpha1.SubagentRun) {
				g.Expect(r.Status.Phase).To(Equal(sessionsv1alpha1.RunRunning))
			})
		Eventually(func() bool {
			a, _ := calls.state(task)
			b, _ := calls.state(grandTask)
			return a && b
		}, testenv.Timeout, testenv.Interval).Should(BeTrue())

		Expect(k8s.Patch(ctx, run, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`)))).To(Succeed())

		for _, r := range []*sessionsv1alpha1.SubagentRun{run, grandchild} {
			waitRun(r, runCompleted)
			Expect(r.Status.Phase).To(Equal(sessionsv1alpha1.RunCancelled), r.Name)
			Expect(meta.IsStatusConditionTrue(r.Status.Conditions, sessionsv1alpha1.ConditionCancelled)).To(BeTrue(), r.Name)
			Expect(meta.FindStatusCondition(r.Status.Conditions, sessionsv1alpha1.ConditionCompleted)).To(BeNil(), r.Name)
		}
		Expect(grandchild.Spec.Cancel).To(BeTrue(), "the cancel cascades through spec.cancel")
		for _, text := range []string{task, grandTask} {
			_, cancelled := calls.state(text)
			Expect(cancelled).To(BeTrue(), "the model call of %q was not cancelled", text)
		}
		var main sessionsv1alpha1.AgentSession
		Expect(k8s.Get(ctx, keyOf(ns, "agent:main:main"), &main)).To(Succeed())
		announce := ""
		for _, rec := range messages(ns, &main) {
			for _, b := range rec.Message.Content {
				if strings.Contains(b.Text, "Sub-agent announce step.") && strings.Contains(b.Text, "\nStatus: cancelled\n") {
					announce = b.Text
				}
			}
		}
		Expect(announce).NotTo(BeEmpty(), "the requester got no announce with Status: cancelled")
		// The task never recorded stats: the announce says how long the run ran and its child.
		Expect(announce).To(MatchRegexp(`\nStats: runtime [0-9.]+m?s, tokens 0 in / 0 out, sessionKey agent:[a-z]+:subagent:[0-9a-f-]+, sessionId [0-9a-f-]+`))
		Expect(engine.Holds(turns.Owner{Kind: turns.OwnerSubagentRun, NamespacedName: client.ObjectKeyFromObject(run)})).To(BeFalse())
	})

	It("cancels a send in its reply-back, and the run its round-1 turn spawned", func() {
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityAll,
			AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}}})
		task := "slow digging for " + ns
		args, err := json.Marshal(map[string]any{"task": task, "agentId": "research"})
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "carol", Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{{Match: "^delegate",
				ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: "sessions_spawn", Arguments: &runtime.RawExtension{Raw: args}}},
				Reply:     "digging started: {{toolResults}}"}}},
			Subagents: sessionsv1alpha1.SubagentsSpec{AllowAgents: []string{"research"}},
		}})).To(Succeed())
		// The requester's reply-back turn answers only after ten minutes: the cancel finds it running.
		createAgent(ns, "dave", sessionsv1alpha1.ScriptRule{Match: "^digging started", Reply: "thanks", Delay: &metav1.Duration{Duration: 10 * time.Minute}})
		createSession(ns, "agent:carol:main", "carol")
		createSession(ns, "agent:dave:main", "dave")

		send := waitSend(createSend(ns, "agent:carol:main", "delegate the digging", 0, "agent:dave:main"),
			func(g Gomega, s *sessionsv1alpha1.SessionSend) {
				g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendReplyBack))
			})
		Eventually(func() bool {
			spawned, _ := calls.state(task)
			replying, _ := calls.state("digging started")
			return spawned && replying
		}, testenv.Timeout, testenv.Interval).Should(BeTrue())

		Expect(k8s.Patch(ctx, send, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`)))).To(Succeed())

		waitSend(send, func(g Gomega, s *sessionsv1alpha1.SessionSend) {
			g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendCancelled))
		})
		Expect(meta.IsStatusConditionTrue(send.Status.Conditions, sessionsv1alpha1.ConditionCancelled)).To(BeTrue())
		Expect(meta.FindStatusCondition(send.Status.Conditions, sessionsv1alpha1.ConditionCompleted)).To(BeNil())
		var runs sessionsv1alpha1.SubagentRunList
		Expect(k8s.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
		Expect(runs.Items).To(HaveLen(1), "round 1 spawned one run")
		run := waitRun(&runs.Items[0], runCompleted)
		Expect(run.Spec.Cancel).To(BeTrue(), "the cancel cascades from the send to the run its turn started")
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunCancelled))
		for _, text := range []string{task, "digging started"} {
			_, cancelled := calls.state(text)
			Expect(cancelled).To(BeTrue(), "the model call of %q was not cancelled", text)
		}
		Expect(engine.Holds(turns.Owner{Kind: turns.OwnerSessionSend, NamespacedName: client.ObjectKeyFromObject(send)})).To(BeFalse())
	})

	It("fails a run whose child session is deleted, with the reason", func() {
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "slow work for " + ns, AgentID: "research"}),
			func(g Gomega, r *sessionsv1alpha1.SubagentRun) {
				g.Expect(r.Status.Phase).To(Equal(sessionsv1alpha1.RunRunning))
			})
		var child sessionsv1alpha1.AgentSession
		Expect(k8s.Get(ctx, keyOf(ns, run.Status.ChildSessionKey), &child)).To(Succeed())
		Expect(k8s.Delete(ctx, &child)).To(Succeed())
		waitRun(run, runCompleted)
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunFailed))
		Expect(run.Status.Notes).To(ContainSubstring("was deleted before the run finished"))
	})
})
