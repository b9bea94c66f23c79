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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// A real MCP server nobody here wrote: the reference "everything" server from the npm
// registry, over streamable HTTP, with the built manager as its client.
var _ = Describe("MCP tools from the everything server", Ordered, func() {
	var url string

	BeforeAll(func() {
		// The one make run-local starts (the pages' tour steps use it too).
		url = cluster.EverythingURL
		Expect(url).NotTo(BeEmpty())

		out, err := applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: echoer
spec:
  model:
    provider: scripted
    script:
    - match: "^echo "
      toolCalls:
      - name: mcp__everything__echo
        arguments: {message: "{{input}}"}
      reply: "{{toolResults}}"
    - match: "^list sessions"
      toolCalls:
      - name: sessions_list
      reply: "{{toolResults}}"
    - match: "announce step"
      reply: ANNOUNCE_SKIP
  tools:
    mcpServers:
    - name: everything
      url: ` + url + `
      allowedTools: [echo, get-sum]
      timeoutSeconds: 20
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: echoer-main
spec:
  key: agent:echoer:main
  agentId: echoer
  chatType: direct
`)
		Expect(err).NotTo(HaveOccurred(), out)
	})

	It("reports the server in the Agent's status", func() {
		out, err := kubectl("wait", "--for=condition=Ready", "agent/echoer", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func() string {
			out, _ := kubectl("get", "agent/echoer", "-o", `jsonpath={.status.mcpServers[0].connected} {.status.mcpServers[0].tools} {.status.conditions[?(@.type=="Ready")].message}`)
			return out
		}, testenv.Timeout, testenv.Interval).Should(Equal("true 2 scripted provider configured; MCP servers: everything 2 tools"))
	})

	It("answers with the echoed text, and the transcript shows the call and its result", func() {
		out, err := applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata:
  name: e2e-mcp-echo
spec:
  sessionKey: agent:echoer:main
  message: echo hello from kubectl
`)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("wait", "--for=condition=Completed", "sessionsend/e2e-mcp-echo", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "sessionsend/e2e-mcp-echo", "-o", "jsonpath={.status.status}|{.status.reply}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(Equal("ok|Echo: echo hello from kubectl"))

		out, code := plugin("history", "agent:echoer:main", "--include-tools", "--limit", "20")
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring(`[call mcp__everything__echo {"message":"echo hello from kubectl"}]`))
		Expect(out).To(MatchRegexp(`toolResult mcp__everything__echo\tEcho: echo hello from kubectl\n`))
	})

	It("gives a SubagentRun of the agent the same tool and not the session tools", func() {
		out, err := applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: SubagentRun
metadata:
  name: e2e-mcp-child-echo
spec:
  task: echo from the child
  agentId: echoer
  requesterSessionKey: agent:echoer:main
---
apiVersion: sessions.agents.dev/v1alpha1
kind: SubagentRun
metadata:
  name: e2e-mcp-child-list
spec:
  task: list sessions please
  agentId: echoer
  requesterSessionKey: agent:echoer:main
`)
		Expect(err).NotTo(HaveOccurred(), out)
		for run, want := range map[string]string{
			"e2e-mcp-child-echo": "toolResult mcp__everything__echo\tEcho: echo from the child\n",
			"e2e-mcp-child-list": `toolResult sessions_list` + "\t" + `{"status":"error","error":"unknown tool \"sessions_list\""}` + "\n",
		} {
			out, err := kubectl("wait", "--for=condition=Completed", "subagentrun/"+run, "--timeout=60s")
			Expect(err).NotTo(HaveOccurred(), out)
			child, err := kubectl("get", "subagentrun/"+run, "-o", "jsonpath={.status.childSessionKey}")
			Expect(err).NotTo(HaveOccurred(), child)
			out, code := plugin("history", strings.TrimSpace(child), "--include-tools", "--limit", "20")
			Expect(code).To(Equal(0), out)
			Expect(out).To(ContainSubstring(want))
		}
	})
})
