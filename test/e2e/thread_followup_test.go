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

package e2e

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/delivery/chatfake"
)

// A thread-bound spawn binds its child to the thread its announce opens: a later send into
// the child announces in that thread, on each platform's local server, through the built
// manager; kubectl sessions history shows the binding.
var _ = Describe("thread follow-ups", func() {
	for kind, chat := range map[string]string{
		chatfake.Telegram: "agent:main:telegram:group:-1001234",
		chatfake.Discord:  "agent:main:discord:channel:998877",
		chatfake.Slack:    "agent:main:slack:channel:C0123",
	} {
		It("reach the thread on "+kind, func() {
			ns := "e2e-thread-" + kind
			const token = "123456789:e2e-bot-token"
			bot := chatfake.New(kind, token)
			srv := httptest.NewServer(bot)
			DeferCleanup(srv.Close)
			out, err := kubectl("create", "namespace", ns)
			Expect(err).NotTo(HaveOccurred(), out)
			out, err = applyYAML(fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: bot
  namespace: %[1]s
  labels: {sessions.agents.dev/agent-usable: "true"}
stringData: {token: %[2]q}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: SessionPolicy
metadata: {name: default, namespace: %[1]s}
spec:
  delivery:
  - {channel: %[3]s, kind: %[3]s, apiURL: %[4]q, secretRef: {name: bot, key: token}}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata: {name: main, namespace: %[1]s}
spec:
  subagents: {allowAgents: ["*"]}
  model:
    provider: scripted
    script:
    - {match: "^Sub-agent announce step", reply: "Notes: opened the thread"}
    - {match: "^Agent-to-agent announce step", reply: "follow-up in the thread"}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata: {name: room, namespace: %[1]s}
spec: {key: %[5]q, agentId: main}
`, ns, token, kind, srv.URL, chat))
			Expect(err).NotTo(HaveOccurred(), out)
			out, err = kubectl("wait", "-n", ns, "--for=condition=Ready", "agent/main", "--timeout=60s")
			Expect(err).NotTo(HaveOccurred(), out)
			Eventually(func() (string, error) {
				return kubectl("get", "-n", ns, "agentsession/room", "-o", "jsonpath={.status.sessionId}")
			}).WithTimeout(60 * time.Second).ShouldNot(BeEmpty())

			out, err = applyYAML(fmt.Sprintf(`apiVersion: sessions.agents.dev/v1alpha1
kind: SubagentRun
metadata: {name: dig, namespace: %s}
spec: {task: "dig into it", agentId: main, requesterSessionKey: %q, thread: true, mode: session}
`, ns, chat))
			Expect(err).NotTo(HaveOccurred(), out)
			out, err = kubectl("wait", "-n", ns, "--for=condition=Completed", "subagentrun/dig", "--timeout=90s")
			Expect(err).NotTo(HaveOccurred(), out)
			out, err = kubectl("get", "-n", ns, "subagentrun/dig", "-o", "jsonpath={.status.childSessionKey} {.status.announce.status} {.status.announce.thread.id}")
			Expect(err).NotTo(HaveOccurred(), out)
			fields := strings.Fields(out)
			Expect(fields).To(HaveLen(3), out)
			child, thread := fields[0], fields[2]
			Expect(fields[1]).To(Equal("delivered"))

			By("a send into the child announces in the run's thread")
			out, code := plugin("send", "-n", ns, child, "anything new?", "--from", chat, "--timeout", "60")
			Expect(code).To(Equal(0), out)
			Eventually(func() string {
				out, _ := kubectl("get", "-n", ns, "sessionsends", "-o", "jsonpath={.items[*].status.announce.status}")
				return out
			}).WithTimeout(60 * time.Second).Should(Equal("delivered"))
			msgs := bot.Messages()
			last := msgs[len(msgs)-1]
			Expect(last.Text).To(ContainSubstring("follow-up in the thread"))
			Expect(last.Thread).To(Equal(thread))

			By("history shows the binding")
			out, code = plugin("history", "-n", ns, child)
			Expect(code).To(Equal(0), out)
			Expect(out).To(ContainSubstring(fmt.Sprintf("# bound to %s chat %s, thread %s, by subagentrun/dig", kind, chat[strings.LastIndex(chat, ":")+1:], thread)))
		})
	}
})
