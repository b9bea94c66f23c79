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
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

// mcpProtocol is the MCP version whose streams are resumable with Last-Event-ID.
const mcpProtocol = "2025-11-25"

// rawMCP speaks the streamable HTTP transport by hand, to drop a stream at will.
type rawMCP struct {
	url, token, session string
	http                *http.Client
}

// do sends one request (GET when body is empty) and returns the open response, which must
// be a success.
func (m *rawMCP) do(ctx context.Context, body, lastEventID string) *http.Response {
	resp := m.send(ctx, body, lastEventID)
	Expect(resp.StatusCode).To(BeNumerically("<", 300), resp.Status)
	return resp
}

// send sends one request (GET when body is empty) and returns the open response.
func (m *rawMCP) send(ctx context.Context, body, lastEventID string) *http.Response {
	method, rd := http.MethodGet, io.Reader(nil)
	if body != "" {
		method, rd = http.MethodPost, strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, m.url, rd)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+m.token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if m.session != "" {
		req.Header.Set("Mcp-Session-Id", m.session)
		req.Header.Set("Mcp-Protocol-Version", mcpProtocol)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := m.http.Do(req)
	Expect(err).NotTo(HaveOccurred())
	return resp
}

// event reads SSE events from r until one satisfies want; it returns that event's id and
// data.
func event(r *bufio.Reader, want func(id, data string) bool) (string, string) {
	var id, data string
	for {
		line, err := r.ReadString('\n')
		Expect(err).NotTo(HaveOccurred(), "the stream ended before the awaited event")
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		case line == "":
			if want(id, data) {
				return id, data
			}
			id, data = "", ""
		}
	}
}

// viewerToken is a token for the history audience of a user who may read sessions and
// runs in default but change nothing.
func viewerToken() string {
	return serviceAccountToken("viewer-", []rbacv1.PolicyRule{{APIGroups: []string{sessionsv1alpha1.GroupVersion.Group},
		Resources: []string{"agentsessions", "subagentruns"}, Verbs: []string{"get", "list", "watch"}}},
		devcluster.HistoryAudience)
}

// callTool connects to /mcp as token's user and calls one tool; it returns the result's text
// and whether it is an error.
func callTool(token, name string, args map[string]any) (string, bool) {
	cs, err := benchfig.ConnectMCP(ctx, cluster.MCPURL("default"), token, cluster.HistoryCAFile)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	Expect(err).NotTo(HaveOccurred())
	return benchfig.ToolText(res), res.IsError
}

var _ = Describe("MCP calls that outlive their client, and a session's runs", Ordered, func() {
	BeforeAll(func() {
		out, err := applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: resumer
spec:
  model:
    provider: scripted
    script:
    - match: "^wait"
      delay: 3s
      reply: done waiting
    - match: "^slow"
      delay: 10m
      reply: late
    - match: "announce step"
      reply: ANNOUNCE_SKIP
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: resumer-main
spec:
  key: agent:resumer:main
  agentId: resumer
  chatType: direct
---
apiVersion: sessions.agents.dev/v1alpha1
kind: SubagentRun
metadata:
  name: e2e-resumer-slow
spec:
  agentId: resumer
  task: slow job
  requesterSessionKey: agent:resumer:main
`)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("wait", "--for=jsonpath={.status.phase}=Running", "subagentrun/e2e-resumer-slow", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
	})

	It("answers a waiting sessions_send on the resumed stream after the client dropped it", func() {
		m := &rawMCP{url: cluster.MCPURL("default"), token: cluster.Token, http: historyClient()}
		init := m.do(ctx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+mcpProtocol+
			`","capabilities":{},"clientInfo":{"name":"e2e-raw","version":"0"}}}`, "")
		m.session = init.Header.Get("Mcp-Session-Id")
		_, _ = io.Copy(io.Discard, init.Body)
		_ = init.Body.Close()
		Expect(m.session).NotTo(BeEmpty())
		_ = m.do(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "").Body.Close()

		// The call, then the client goes away after the stream's first event.
		callCtx, drop := context.WithCancel(ctx)
		call := m.do(callCtx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sessions_send",`+
			`"arguments":{"sessionKey":"agent:resumer:main","message":"wait for me","timeoutSeconds":60}}}`, "")
		lastID, _ := event(bufio.NewReader(call.Body), func(id, _ string) bool { return id != "" })
		drop()
		_ = call.Body.Close()

		// Resumed from that event, the same stream carries the call's result. Until the
		// server has seen the dropped connection it still holds that stream and answers
		// 409 Conflict; a client retries, as the SDK's own client does.
		var resumed *http.Response
		Eventually(func(g Gomega) {
			resp := m.send(ctx, "", lastID)
			if resp.StatusCode != http.StatusOK {
				_ = resp.Body.Close()
			}
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK), resp.Status)
			resumed = resp
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		defer func() { _ = resumed.Body.Close() }()
		_, data := event(bufio.NewReader(resumed.Body), func(_, data string) bool { return strings.Contains(data, `"id":2`) })
		Expect(data).To(ContainSubstring(`\"status\":\"ok\"`))
		Expect(data).To(ContainSubstring(`\"reply\":\"done waiting\"`))
	})

	It("lists a session's runs and refuses a cancel to a reader without the right to change them", func() {
		text, isErr := callTool(cluster.Token, "subagents", map[string]any{"sessionKey": "agent:resumer:main"})
		Expect(isErr).To(BeFalse(), text)
		Expect(text).To(ContainSubstring(`"name":"e2e-resumer-slow"`))
		Expect(text).To(ContainSubstring(`"phase":"Running"`))

		viewer := viewerToken()
		text, isErr = callTool(viewer, "subagents", map[string]any{"sessionKey": "agent:resumer:main"})
		Expect(isErr).To(BeFalse(), text)
		Expect(text).To(ContainSubstring(`"name":"e2e-resumer-slow"`))
		text, isErr = callTool(viewer, "subagents", map[string]any{"sessionKey": "agent:resumer:main", "cancel": "e2e-resumer-slow"})
		Expect(isErr).To(BeTrue(), text)
		Expect(text).To(ContainSubstring("forbidden"))
		out, err := kubectl("get", "subagentrun/e2e-resumer-slow", "-o", "jsonpath={.spec.cancel}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(BeEmpty())
	})

	It("cancels a session's run for a caller who may", func() {
		text, isErr := callTool(cluster.Token, "subagents", map[string]any{"sessionKey": "agent:resumer:main", "cancel": "e2e-resumer-slow"})
		Expect(isErr).To(BeFalse(), text)
		Expect(text).To(ContainSubstring(`"cancelled":true`))
		out, err := kubectl("wait", "--for=condition=Cancelled", "subagentrun/e2e-resumer-slow", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
	})
})
