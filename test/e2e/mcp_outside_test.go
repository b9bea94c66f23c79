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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/devcluster"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// outsideClient is a Node script on the official TypeScript SDK's client: it connects to
// /mcp with a bearer token, lists the tools, sends into a session, reads its history and
// finds the send with sessions_search, and prints what it got as JSON (or the HTTP status of a refused connect).
const outsideClient = `
import { Client } from "file://SDK/index.js";
import { StreamableHTTPClientTransport } from "file://SDK/streamableHttp.js";
const [url, token] = process.argv.slice(2);
const headers = token ? { Authorization: "Bearer " + token } : {};
const client = new Client({ name: "e2e-outside", version: "0.0.0" });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
} catch (e) {
  console.log(JSON.stringify({ refused: e.code ?? 0, error: String(e) }));
  process.exit(0);
}
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
const send = await client.callTool({ name: "sessions_send",
  arguments: { sessionKey: "agent:outside:main", message: "hello from outside", timeoutSeconds: 60 } });
const history = await client.callTool({ name: "sessions_history", arguments: { sessionKey: "agent:outside:main" } });
// The search index takes appends in the background: ask until it has the send.
let search;
for (let i = 0; i < 100; i++) {
  search = await client.callTool({ name: "sessions_search", arguments: { query: "hello outside", limit: 5 } });
  if (search.content[0].text.includes("hello from outside")) break;
  await new Promise((r) => setTimeout(r, 200));
}
const text = async (name, args) => (await client.callTool({ name, arguments: args })).content[0].text;
// The gateway's newer tools and parameters (issue 38), with the same names and shapes.
const status = await text("session_status", { sessionKey: "agent:outside:main", changesSince: 0 });
const patch = await text("sessions", { action: "patch", sessionKey: "agent:outside:main", label: "outside-door" });
// The sidecar reads sessions from its cache: the label shows there soon after the patch.
const settled = async (name, args, ok) => {
  let out = "";
  for (let i = 0; i < 100; i++) {
    out = await text(name, args);
    if (ok(out)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return out;
};
const listed = await settled("sessions_list", { label: "outside-door", includeLastMessage: true }, (t) => t.includes("agent:outside:main"));
const byLabel = await settled("sessions_send", { label: "outside-door", message: "hello by label", timeoutSeconds: 60 }, (t) => !t.includes("no active session"));
await client.close();
// sessions_yield speaks for a session: a connection acting as one (act-as) may call it.
const asSession = new Client({ name: "e2e-outside-session", version: "0.0.0" });
await asSession.connect(new StreamableHTTPClientTransport(new URL(url + "&session=agent:outside:main"), { requestInit: { headers } }));
const yielded = (await asSession.callTool({ name: "sessions_yield", arguments: { message: "waiting" } })).content[0].text;
await asSession.close();
console.log(JSON.stringify({ tools, send: send.content[0].text, history: history.content[0].text, search: search.content[0].text,
  status, patch, listed, byLabel, yielded }));
`

type outsideResult struct {
	Refused int      `json:"refused"`
	Error   string   `json:"error"`
	Tools   []string `json:"tools"`
	Send    string   `json:"send"`
	History string   `json:"history"`
	Search  string   `json:"search"`
	Status  string   `json:"status"`
	Patch   string   `json:"patch"`
	Listed  string   `json:"listed"`
	ByLabel string   `json:"byLabel"`
	Yielded string   `json:"yielded"`
}

var _ = Describe("The session tools over MCP from outside", Ordered, func() {
	var script string
	var node string

	runClient := func(url, token string) outsideResult {
		var r outsideResult
		runNodeJSON(node, script, &r, url, token)
		return r
	}

	BeforeAll(func() {
		node, script = nodeScript("outside.mjs", outsideClient, testenv.MCPPackages.SDKClient)

		applyReady(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: outside
spec:
  model:
    provider: scripted
    script:
    - match: "^hello"
      reply: "hi from inside"
    - match: "announce step"
      reply: ANNOUNCE_SKIP
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: outside-main
spec:
  key: agent:outside:main
  agentId: outside
  chatType: direct
`, "outside")
	})

	It("lists the tools, sends into a session and reads its history with a ServiceAccount token", func() {
		r := runClient(cluster.MCPURL("default"), cluster.Token)
		Expect(r.Refused).To(BeZero(), r.Error)
		Expect(r.Tools).To(Equal([]string{"agents_list", "approvals_decide", "approvals_list", "memory_get", "memory_search", "memory_write",
			"session_status", "sessions", "sessions_history", "sessions_list",
			"sessions_search", "sessions_send", "sessions_spawn", "sessions_yield", "subagents"}))
		Expect(r.Send).To(ContainSubstring(`"status":"ok"`))
		Expect(r.Send).To(ContainSubstring(`"reply":"hi from inside"`))
		Expect(r.History).To(ContainSubstring("hello from outside"))
		Expect(r.History).To(ContainSubstring("hi from inside"))
		Expect(r.Search).To(ContainSubstring(`"sessionKey":"agent:outside:main"`))
		Expect(r.Search).To(ContainSubstring(`"excerpt":"hello from outside"`))
		Expect(r.History).To(ContainSubstring(`"contentRedacted":false`))

		By("the gateway's newer tools: status, management, list and send by label, yield")
		Expect(r.Status).To(ContainSubstring(`"stateVersion":1`), "the person's message is the one change")
		Expect(r.Status).To(ContainSubstring(`"kind":"message"`))
		Expect(r.Patch).To(ContainSubstring(`"status":"ok"`))
		Expect(r.Listed).To(And(ContainSubstring(`"key":"agent:outside:main"`), ContainSubstring(`"lastMessage"`)))
		Expect(r.ByLabel).To(ContainSubstring(`"reply":"hi from inside"`))
		Expect(r.Yielded).To(ContainSubstring(`"status":"yielded"`))
	})

	It("refuses a client without a token (401)", func() {
		Expect(runClient(cluster.MCPURL("default"), "").Refused).To(Equal(401))
	})

	It("refuses a namespace the caller cannot read (403)", func() {
		Expect(runClient(cluster.MCPURL("kube-system"), tokenWithoutRights(devcluster.HistoryAudience)).Refused).To(Equal(403))
	})
})
