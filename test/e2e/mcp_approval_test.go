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
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// approvalClient is a Node script on the official TypeScript SDK's client: as the token's
// user it lists the tool calls waiting in default, asks approvals_decide to approve the one
// of the owner named (SessionSend/NAME), and lists again on the same connection; it prints
// each answer's text and whether the SDK flagged it isError.
const approvalClient = `
import { Client } from "file://SDK/index.js";
import { StreamableHTTPClientTransport } from "file://SDK/streamableHttp.js";
const [url, token, owner] = process.argv.slice(2);
const client = new Client({ name: "e2e-approver", version: "0.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url),
  { requestInit: { headers: { Authorization: "Bearer " + token } } }));
const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args });
  return { text: r.content[0].text, isError: r.isError === true };
};
const listed = await call("approvals_list", {});
const row = listed.isError ? undefined : JSON.parse(listed.text).approvals.find((a) => a.owner === owner);
const decided = row ? await call("approvals_decide", { name: row.name, decision: "Approved", reason: "looks safe" }) : null;
const after = await call("approvals_list", {});
await client.close();
console.log(JSON.stringify({ listed, name: row?.name ?? "", tool: row?.tool ?? "", decided, after }));
`

type toolAnswer struct {
	Text    string `json:"text"`
	IsError bool   `json:"isError"`
}

type approvalResult struct {
	Listed  toolAnswer  `json:"listed"`
	Name    string      `json:"name"`
	Tool    string      `json:"tool"`
	Decided *toolAnswer `json:"decided"`
	After   toolAnswer  `json:"after"`
}

// A person decides a waiting tool call through /mcp with a client nobody here wrote: the
// Agent's rule holds its model's call of the everything server's echo, a user without the
// verb approve is refused as a tool error, and an approver's decision is recorded as that
// user and lets the call run.
var _ = Describe("Tool approvals decided over MCP from outside", Ordered, func() {
	const send = "e2e-approve-mcp"
	var script, node string

	runClient := func(token string) approvalResult {
		var r approvalResult
		runNodeJSON(node, script, &r, cluster.MCPURL("default"), token, "SessionSend/"+send)
		return r
	}
	approval := func(name, jsonpath string) string {
		out, err := kubectl("get", "toolapproval/"+name, "-o", "jsonpath="+jsonpath)
		Expect(err).NotTo(HaveOccurred(), out)
		return out
	}

	BeforeAll(func() {
		node, script = nodeScript("approve.mjs", approvalClient, testenv.MCPPackages.SDKClient)

		// The user roles as shipped (make deploy and the chart install them).
		out, err := kubectl("apply", "-f", filepath.Join(testenv.RepoRoot(), "config", "rbac", "user_roles.yaml"))
		Expect(err).NotTo(HaveOccurred(), out)

		Expect(cluster.EverythingURL).NotTo(BeEmpty())
		applyReady(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: careful
spec:
  model:
    provider: scripted
    script:
    - match: "^echo "
      toolCalls:
      - name: mcp__everything__echo
        arguments: {message: "{{input}}"}
      reply: "{{toolResults}}"
    - match: "announce step"
      reply: ANNOUNCE_SKIP
  tools:
    mcpServers:
    - name: everything
      url: `+cluster.EverythingURL+`
      allowedTools: [echo]
      timeoutSeconds: 20
    approval:
      rules:
      - tools: ["mcp__everything__*"]
        action: require
        timeoutSeconds: 600
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: careful-main
spec:
  key: agent:careful:main
  agentId: careful
  chatType: direct
`, "careful")

		out, err = applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata:
  name: ` + send + `
spec:
  sessionKey: agent:careful:main
  message: echo approved over mcp
`)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("wait", "--for=condition="+sessionsv1alpha1.ConditionAwaitingApproval, "sessionsend/"+send, "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
	})

	It("refuses a user without the verb approve as a tool error, and the call stays pending", func() {
		// Reads approvals and may even write them, but holds no approve.
		user, token := serviceAccount("bystander-", []rbacv1.PolicyRule{{APIGroups: []string{sessionsv1alpha1.GroupVersion.Group},
			Resources: []string{"toolapprovals"}, Verbs: []string{"update", "patch"}}},
			[]string{"agent-sessions-view", "agent-sessions-edit"}, devcluster.HistoryAudience)
		r := runClient(token)
		Expect(r.Listed.IsError).To(BeFalse(), r.Listed.Text)
		Expect(r.Tool).To(Equal("mcp__everything__echo"), r.Listed.Text)
		Expect(r.Decided).NotTo(BeNil())
		Expect(r.Decided.IsError).To(BeTrue(), r.Decided.Text)
		Expect(r.Decided.Text).To(ContainSubstring(`user \"` + user + `\" cannot approve toolapprovals in the namespace \"default\"`))
		Expect(r.After.IsError).To(BeFalse(), "the connection outlives the refusal: "+r.After.Text)
		Expect(r.After.Text).To(ContainSubstring(r.Name))

		Expect(approval(r.Name, `{.spec.decision}|{.status.phase}|{.status.decidedBy}`)).To(Equal("|Pending|"))
	})

	It("lets an approver decide, records that user as decidedBy and runs the call", func() {
		user, token := serviceAccount("approver-", nil, []string{"agent-sessions-view", "agent-sessions-approver"}, devcluster.HistoryAudience)
		r := runClient(token)
		Expect(r.Listed.IsError).To(BeFalse(), r.Listed.Text)
		Expect(r.Name).NotTo(BeEmpty(), r.Listed.Text)
		Expect(r.Decided).NotTo(BeNil())
		Expect(r.Decided.IsError).To(BeFalse(), r.Decided.Text)
		Expect(r.Decided.Text).To(ContainSubstring(`"decision":"Approved"`))
		Expect(r.After.Text).NotTo(ContainSubstring(r.Name), "a decided call is no longer listed")

		Eventually(func() string {
			return approval(r.Name, `{.spec.decision}|{.spec.reason}|{.status.phase}|{.status.decidedBy}|{.status.conditions[?(@.type=="Decided")].status}`)
		}, testenv.Timeout, testenv.Interval).Should(Equal("Approved|looks safe|Approved|" + user + "|True"))

		out, err := kubectl("wait", "--for=condition=Completed", "sessionsend/"+send, "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "sessionsend/"+send, "-o", "jsonpath={.status.status}|{.status.reply}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(Equal("ok|Echo: echo approved over mcp"))
	})
})
