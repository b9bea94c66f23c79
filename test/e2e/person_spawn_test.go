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
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// What a person gets from the smallest spawn and from refused calls, with the built binaries
// and the real webhook: kubectl apply of `spec: {task: hi}` runs under the sample policy's
// defaultAgentId, and a refused MCP call is an isError result whose status says why.
var _ = Describe("a person's spawn and refusals", func() {
	It("runs spec: {task: hi} under the namespace's default agent, and says which", func() {
		out, err := applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: SubagentRun
metadata:
  name: e2e-minimal
spec: {task: hi}
`)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("wait", "--for=condition=Completed", "subagentrun/e2e-minimal", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "subagentrun/e2e-minimal", "-o", "jsonpath={.spec.agentId} {.status.childSessionKey}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(HavePrefix("main agent:main:subagent:"))
	})

	It("spawns over MCP with a task alone", func() {
		text, isErr := callTool(cluster.Token, "sessions_spawn", map[string]any{"task": "hi"})
		Expect(isErr).To(BeFalse(), text)
		Expect(text).To(ContainSubstring(`"status":"accepted"`))
		Expect(text).To(ContainSubstring(`"childSessionKey":"agent:main:subagent:`))
	})

	result := func(text string) (status, msg string) {
		var r struct{ Status, Error string }
		Expect(json.Unmarshal([]byte(text), &r)).To(Succeed(), text)
		return r.Status, r.Error
	}

	It("takes any model override when the Agent lists no allowedModels, as the spec says", func() {
		text, isErr := callTool(cluster.Token, "sessions_spawn", map[string]any{"task": "hi", "agentId": "research", "model": "big"})
		Expect(isErr).To(BeFalse(), text)
		Expect(text).To(ContainSubstring(`"status":"accepted"`))
	})

	It("answers arguments the webhook refuses with status error, flagged isError", func() {
		text, isErr := callTool(cluster.Token, "sessions_spawn", map[string]any{"task": "hi", "thinking": "max"})
		Expect(isErr).To(BeTrue(), text)
		status, msg := result(text)
		Expect(status).To(Equal("error"))
		Expect(msg).To(ContainSubstring(`spec.thinking: Unsupported value: "max"`))
	})

	It("answers a policy's refusal with status forbidden, flagged isError", func() {
		text, isErr := callTool(cluster.Token, "sessions_send", map[string]any{
			"sessionKey": "agent:main:discord:group:general", "message": "hi", "timeoutSeconds": 0})
		Expect(isErr).To(BeTrue(), text)
		status, msg := result(text)
		Expect(status).To(Equal("forbidden"))
		Expect(strings.Contains(msg, "send denied by sessionPolicy default rule 1")).To(BeTrue(), msg)
	})
})
