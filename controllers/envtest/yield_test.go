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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Orchestration with sessions_yield: the lead spawns a sub-agent and yields in one round of
// tool calls; its turn ends with no further model call (the rule's reply never appears),
// and the child's announce starts the lead's next turn, as any announce does.
var _ = Describe("sessions_yield", func() {
	It("ends the turn after a spawn and continues on the child's announce", func() {
		ns := newNamespace()
		orchestrate := toolRule("^orchestrate", "sessions_spawn", map[string]any{"task": "count the llamas", "label": "llamas"})
		orchestrate.ToolCalls = append(orchestrate.ToolCalls, toolRule("", "sessions_yield", map[string]any{"message": "waiting for llamas"}).ToolCalls...)
		orchestrate.Reply = "NEVER: the model was called after the yield"
		createAgent(ns, "lead", orchestrate,
			rule("^count the llamas", "42 llamas"),
			rule("^Sub-agent announce step", "the child says: {{input}}"))
		lead := createSession(ns, "agent:lead:main", "lead")

		send := waitSend(createSend(ns, "agent:lead:main", "orchestrate", 30, ""), completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendOK))
		Expect(send.Status.Reply).To(BeEmpty(), "the yielded turn answered nothing")

		var yielded string
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(lead), lead)).To(Succeed())
			all := texts(messages(ns, lead))
			g.Expect(strings.Join(all, "\n")).NotTo(ContainSubstring("NEVER"))
			var roles []string
			for _, r := range messages(ns, lead) {
				roles = append(roles, r.Message.Role)
				if r.Message.ToolName == "sessions_yield" {
					yielded = r.Message.Content[0].Text
				}
			}
			g.Expect(roles).To(Equal([]string{
				transcript.RoleUser, transcript.RoleAssistant, transcript.RoleToolResult, transcript.RoleToolResult, // the yielded turn
				transcript.RoleUser, transcript.RoleAssistant, // the announce's turn
			}))
			g.Expect(all[4]).To(HavePrefix("user: Sub-agent announce step."))
			g.Expect(all[5]).To(ContainSubstring("42 llamas"))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		// The children it names are those the cache shows in flight: a run created in the same
		// round of tool calls may not be there yet, so only the status is certain.
		Expect(yielded).To(HavePrefix(`{"status":"yielded"`), "the transcript records that the session waits")
	})
})
