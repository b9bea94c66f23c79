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
	"github.com/agent-sessions/agent-session-operator/controllers/announce"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// What a sub-agent's announce delivers to the requester's channel: the requester model's
// reply normalised to Status/Result/Notes, Status from the runtime, plus the stats line.
var _ = Describe("a sub-agent announce, as the requester's channel gets it", func() {
	var ns string
	priced := &sessionsv1alpha1.Pricing{InputPerMillion: "3", OutputPerMillion: "15", Currency: "USD"}
	agent := func(name string, rules ...sessionsv1alpha1.ScriptRule) {
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
			Model:     sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: rules, Pricing: priced},
			Subagents: sessionsv1alpha1.SubagentsSpec{AllowAgents: []string{"research"}}}})).To(Succeed())
	}
	// delivered waits for the one announce the sink got for the requester.
	delivered := func() string {
		var text string
		Eventually(func(g Gomega) {
			got := sink.received(ns, "agent:main:main")
			g.Expect(got).To(HaveLen(1))
			text = got[0].Text
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		GinkgoWriter.Printf("delivered announce:\n%s\n", text)
		return text
	}
	BeforeEach(func() {
		ns = newNamespace()
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Delivery: []sessionsv1alpha1.DeliverySink{{Channel: "webchat", URL: sink.URL}}})
		createSession(ns, "agent:main:main", "main", func(s *sessionsv1alpha1.AgentSession) {
			s.Spec.DeliveryContext = &sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: "room-1"}
		})
	})

	It("delivers Status from the runtime, the model's Result and Notes, and the stats line with the cost", func() {
		// The model claims a failure and its own stats: neither reaches the channel.
		agent("main", rule("^Sub-agent announce step", "Status: failed\nResult: the llamas hum\nNotes: counted twice\nStats: free"))
		agent("research", rule("^look", "found it"))
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look up llamas", AgentID: "research", RequesterSessionKey: "agent:main:main"}), runCompleted)
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))
		stats := run.Status.Stats
		Expect(stats.Cost).To(HaveSuffix(" USD"), "the child's priced turn costs something")

		want := "Status: succeeded\nResult: the llamas hum\nNotes: counted twice\nStats: " + announce.StatsLine(*stats)
		Expect(want).To(ContainSubstring(", cost " + stats.Cost))
		Expect(delivered()).To(Equal(want))
		Expect(run.Status.Announce).To(Equal(&sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceDelivered, Message: want, Target: "webchat:room-1"}))
	})

	It("keeps ANNOUNCE_SKIP silent", func() {
		agent("main", rule("^Sub-agent announce step", sessionsv1alpha1.AnnounceSkip))
		agent("research", rule("^look", "found it"))
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look up llamas", AgentID: "research", RequesterSessionKey: "agent:main:main"}), runCompleted)
		Expect(run.Status.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceSkipped))
		Consistently(func() int { return len(sink.received(ns, "agent:main:main")) }, "300ms", testenv.Interval).Should(BeZero())
	})

	It("takes the latest tool result as the Result of an empty final reply, and the run's Result where the announce gives none", func() {
		args := func(v map[string]any) *runtime.RawExtension {
			b, err := json.Marshal(v)
			Expect(err).NotTo(HaveOccurred())
			return &runtime.RawExtension{Raw: b}
		}
		agent("main", rule("^Sub-agent announce step", ""))
		agent("research", sessionsv1alpha1.ScriptRule{Match: "^look", Reply: "", ToolCalls: []sessionsv1alpha1.ScriptToolCall{
			{Name: "workspace_list", Arguments: args(map[string]any{"path": ".agents", "depth": 1})},
			{Name: "workspace_list", Arguments: args(map[string]any{"path": ".agents/attachments"})},
		}})
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look around", AgentID: "research", RequesterSessionKey: "agent:main:main",
			Attachments: []sessionsv1alpha1.Attachment{{Name: "notes.txt", Content: "llamas hum"}}}), runCompleted)
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))

		var child sessionsv1alpha1.AgentSession
		Expect(k8s.Get(ctx, keyOf(ns, run.Status.ChildSessionKey), &child)).To(Succeed())
		var results []string
		for _, r := range messages(ns, &child) {
			if r.Message.Role == transcript.RoleToolResult {
				results = append(results, r.Message.Content[0].Text)
			}
		}
		Expect(results).To(HaveLen(2))
		Expect(results[1]).To(ContainSubstring("notes.txt"))
		Expect(run.Status.Result).To(Equal(results[1]), "the latest tool result, not the first")
		Expect(delivered()).To(Equal("Status: succeeded\nResult: " + strings.TrimSpace(results[1]) +
			"\nNotes: none\nStats: " + announce.StatsLine(*run.Status.Stats)))
	})
})
