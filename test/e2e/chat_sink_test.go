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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/delivery/chatfake"
)

// A spawn whose requester is a Telegram group session delivers its announce to the group,
// through the built manager, to a local server that speaks the Bot API's sendMessage (on
// 127.0.0.1, which make run-local's --egress-allow lets through).
var _ = Describe("a Telegram sink", func() {
	It("delivers a spawn's announce to the requester's group", func() {
		const token = "123456789:e2e-bot-token"
		bot := chatfake.New(chatfake.Telegram, token)
		srv := httptest.NewServer(bot)
		DeferCleanup(srv.Close)
		out, err := kubectl("create", "namespace", "e2e-telegram")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = applyYAML(fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: telegram-bot
  namespace: e2e-telegram
  labels: {sessions.agents.dev/agent-usable: "true"}
stringData: {token: %q}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: SessionPolicy
metadata: {name: default, namespace: e2e-telegram}
spec:
  delivery:
  - {channel: telegram, kind: telegram, apiURL: %q, secretRef: {name: telegram-bot, key: token}}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata: {name: main, namespace: e2e-telegram}
spec:
  model:
    provider: scripted
    script:
    - {match: "^Sub-agent announce step", reply: "Notes: relayed to the group"}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata: {name: family, namespace: e2e-telegram}
spec: {key: "agent:main:telegram:group:-1001234", agentId: main}
`, token, srv.URL))
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("wait", "-n", "e2e-telegram", "--for=condition=Ready", "agent/main", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func() (string, error) {
			return kubectl("get", "-n", "e2e-telegram", "agentsession/family", "-o", "jsonpath={.status.sessionId}")
		}).WithTimeout(60 * time.Second).ShouldNot(BeEmpty())
		out, err = applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: SubagentRun
metadata: {name: look-up, namespace: e2e-telegram}
spec: {task: "look up the llamas", agentId: main, requesterSessionKey: "agent:main:telegram:group:-1001234"}
`)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("wait", "-n", "e2e-telegram", "--for=condition=Completed", "subagentrun/look-up", "--timeout=90s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "-n", "e2e-telegram", "subagentrun/look-up", "-o", "jsonpath={.status.announce.status} {.status.announce.target}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(Equal("delivered telegram:-1001234"))
		msgs := bot.Messages()
		Expect(msgs).To(HaveLen(1))
		Expect(msgs[0].To).To(Equal("-1001234"))
		Expect(msgs[0].Text).To(ContainSubstring("Status:"))
		Expect(msgs[0].Text).To(ContainSubstring("Notes: relayed to the group"))

		out, code := plugin("deliveries", "-n", "e2e-telegram")
		Expect(code).To(Equal(0), out)
		Expect(out).To(MatchRegexp(`subagentrun/look-up\s+delivered\s+telegram:-1001234\s+1/1`))
	})
})
