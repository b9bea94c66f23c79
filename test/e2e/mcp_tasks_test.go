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
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// mcpTaskCall makes one request of MCP 2026-07-28 to /mcp in default, declaring the tasks
// extension and, when given, a traceparent in _meta; it returns the JSON-RPC result or error.
func mcpTaskCall(method string, params map[string]any, traceparent string) (map[string]any, map[string]any) {
	meta := map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
		"extensions": map[string]any{mcpserver.TasksExtension: map[string]any{}}}}
	if traceparent != "" {
		meta["traceparent"] = traceparent
	}
	params["_meta"] = meta
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cluster.MCPURL("default"), bytes.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+cluster.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcpserver.StatelessRevision)
	resp, err := historyClient().Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var r struct {
		Result map[string]any
		Error  map[string]any
	}
	Expect(json.Unmarshal(b, &r)).To(Succeed(), string(b))
	return r.Result, r.Error
}

var _ = Describe("MCP 2026-07-28 tasks for long sends", Ordered, func() {
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

	BeforeAll(func() {
		applyReady(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: tasker
spec:
  model:
    provider: scripted
    script:
    - match: "^think"
      delay: 3s
      reply: "thought it over"
    - match: "^forever"
      delay: 600s
      reply: "never"
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: tasker-main
spec:
  key: agent:tasker:main
  agentId: tasker
  chatType: direct
`, "tasker")
	})

	It("answers a long sessions_send with a task, polled to the reply; the send carries the caller's trace", func() {
		created, rpcErr := mcpTaskCall("tools/call", map[string]any{"name": "sessions_send",
			"arguments": map[string]any{"sessionKey": "agent:tasker:main", "message": "think hard", "timeoutSeconds": 300}}, traceparent)
		Expect(rpcErr).To(BeNil())
		Expect(created).To(HaveKeyWithValue("resultType", "task"))
		Expect(created).To(HaveKeyWithValue("status", "working"))
		taskID, _ := created["taskId"].(string)
		Expect(taskID).To(HaveSuffix("/round-1"))

		Eventually(func(g Gomega) {
			got, rpcErr := mcpTaskCall("tasks/get", map[string]any{"taskId": taskID}, "")
			g.Expect(rpcErr).To(BeNil())
			g.Expect(got).To(HaveKeyWithValue("status", "completed"))
			b, _ := json.Marshal(got["result"])
			g.Expect(string(b)).To(ContainSubstring(`thought it over`))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())

		out, err := kubectl("get", "sessionsends", "-o", `jsonpath={range .items[*]}{.status.runId} {.metadata.annotations.sessions\.agents\.dev/trace-parent}{"\n"}{end}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring(taskID + " " + traceparent))
	})

	It("cancels another task with tasks/cancel: its send ends Cancelled", func() {
		created, rpcErr := mcpTaskCall("tools/call", map[string]any{"name": "sessions_send",
			"arguments": map[string]any{"sessionKey": "agent:tasker:main", "message": "forever and ever", "timeoutSeconds": 600}}, "")
		Expect(rpcErr).To(BeNil())
		taskID, _ := created["taskId"].(string)
		ack, rpcErr := mcpTaskCall("tasks/cancel", map[string]any{"taskId": taskID}, "")
		Expect(rpcErr).To(BeNil())
		Expect(ack).To(Equal(map[string]any{"resultType": "complete"}))
		Eventually(func(g Gomega) {
			got, rpcErr := mcpTaskCall("tasks/get", map[string]any{"taskId": taskID}, "")
			g.Expect(rpcErr).To(BeNil())
			g.Expect(got).To(HaveKeyWithValue("status", "cancelled"))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		out, err := kubectl("get", "sessionsends", "-o", `jsonpath={range .items[*]}{.status.runId}={.status.phase}{"\n"}{end}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(out, "\n")).To(ContainElement(taskID + "=Cancelled"))
	})
})
