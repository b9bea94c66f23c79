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
	"io"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// a2aClient is a Node script on the A2A JavaScript SDK's client (@a2a-js/sdk) speaking A2A
// 0.3 (its LegacyJsonRpcTransport, to the card's 0.3 url: the SDK's factory would pick the
// card's 1.0 interface): it reads the agent card at BASE, then reads the card back, sends a
// message, streams one, or starts one and cancels it, and prints what it got as JSON (or
// why the card was refused).
const a2aClient = `
import { Client, DefaultAgentCardResolver } from "file://SDK/client/index.js";
import { LegacyJsonRpcTransport } from "file://SDK/compat/v0_3/client/index.js";
const [base, token, what, message] = process.argv.slice(2);
const out = (o) => console.log(JSON.stringify(o));
const fetchImpl = (url, init = {}) => {
  const headers = new Headers(init.headers || {});
  if (token) headers.set("Authorization", "Bearer " + token);
  return fetch(url, { ...init, headers });
};
const legacyCompat = { enabled: true };
let client;
try {
  const res = await fetchImpl(new URL(".well-known/agent-card.json", base));
  if (!res.ok) throw new Error("Failed to fetch Agent Card from " + base + ": " + res.status);
  const raw = await res.json();
  const card = new DefaultAgentCardResolver({ fetchImpl, legacyCompat }).normalizeAgentCard(raw);
  client = new Client(new LegacyJsonRpcTransport({ endpoint: raw.url, fetchImpl }), card);
} catch (e) {
  out({ refused: String(e) });
  process.exit(0);
}
const text = (parts) => (parts || []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const msg = (t) => ({ message: { messageId: crypto.randomUUID(), role: 1, parts: [{ content: { $case: "text", value: t } }] } });
const STATES = ["unspecified", "submitted", "working", "completed", "failed", "canceled", "input-required", "rejected", "auth-required"];
const state = (t) => STATES[t.status?.state] ?? String(t.status?.state);
if (what === "card") {
  const card = await client.getAgentCard();
  out({ name: card.name, description: card.description, streaming: card.capabilities?.streaming, protocol: client.protocolVersion });
} else if (what === "send") {
  const t = await client.sendMessage(msg(message));
  out({ id: t.id, contextId: t.contextId, state: state(t), reply: text(t.artifacts?.[0]?.parts) });
} else if (what === "stream") {
  const events = [];
  let reply = "";
  for await (const ev of client.sendMessageStream(msg(message))) {
    const p = ev.payload;
    if (p.$case === "task") events.push("task:" + state(p.value));
    if (p.$case === "artifactUpdate") { events.push("artifact"); reply += text(p.value.artifact?.parts); }
    if (p.$case === "statusUpdate") events.push("status:" + state(p.value));
  }
  out({ events, reply });
} else if (what === "cancel") {
  const started = await client.sendMessage({ ...msg(message), configuration: { returnImmediately: true, acceptedOutputModes: [] } });
  let t = await client.cancelTask({ id: started.id });
  for (let i = 0; i < 300 && state(t) !== "canceled"; i++) {
    await new Promise((r) => setTimeout(r, 200));
    t = await client.getTask({ id: started.id });
  }
  out({ started: state(started), state: state(t) });
}
`

type a2aResult struct {
	Refused     string   `json:"refused"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Streaming   bool     `json:"streaming"`
	Protocol    string   `json:"protocol"`
	ID          string   `json:"id"`
	ContextID   string   `json:"contextId"`
	State       string   `json:"state"`
	Started     string   `json:"started"`
	Reply       string   `json:"reply"`
	Events      []string `json:"events"`
}

var _ = Describe("Agents over A2A to a client nobody here wrote", Ordered, func() {
	var script, node string

	run := func(namespace, agent, token, what, message string) a2aResult {
		var r a2aResult
		runNodeJSON(node, script, &r, cluster.HistoryURL()+"/a2a/"+namespace+"/"+agent+"/", token, what, message)
		return r
	}
	// caller holds, in default only, the rights an A2A caller needs: make sessions and
	// sends, act as its sessions, read their transcripts, cancel its sends.
	var caller string

	BeforeAll(func() {
		node, script = nodeScript("a2a-client.mjs", a2aClient, testenv.MCPPackages.A2ASDK)
		caller = a2aCallerToken("a2a-caller-")

		applyReady(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: a2a-echo
spec:
  description: answers ping with pong, and slowly to slow
  model:
    provider: scripted
    script:
    - match: "^ping"
      reply: "pong from a2a-echo"
    - match: "^slow"
      delay: 120s
      reply: "too late"
`, "a2a-echo")
	})

	It("reads the agent card: name, description, streaming, A2A 0.3", func() {
		r := run("default", "a2a-echo", caller, "card", "")
		Expect(r.Refused).To(BeEmpty())
		Expect([]any{r.Name, r.Description, r.Streaming, r.Protocol}).To(
			Equal([]any{"a2a-echo", "answers ping with pong, and slowly to slow", true, "0.3"}))
	})

	It("sends a message and gets the reply as the completed task's artifact, in the context's session", func() {
		r := run("default", "a2a-echo", caller, "send", "ping over a2a")
		Expect(r.Refused).To(BeEmpty())
		Expect(r.State).To(Equal("completed"))
		Expect(r.Reply).To(Equal("pong from a2a-echo"))
		Expect(r.ID).To(HaveSuffix("/round-1"))
		out, err := kubectl("get", "agentsessions", "-o", "jsonpath={.items[*].spec.key}")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Fields(out)).To(ContainElement("agent:a2a-echo:a2a:" + r.ContextID))
		out, err = kubectl("get", "sessionsends", "-o", "jsonpath={.items[*].status.runId}")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Fields(out)).To(ContainElement(r.ID))
	})

	It("streams a task: the task, the reply as an artifact, then completed", func() {
		r := run("default", "a2a-echo", caller, "stream", "ping streamed")
		Expect(r.Refused).To(BeEmpty())
		Expect(r.Events).To(HaveExactElements(HavePrefix("task:"), "artifact", "status:completed"))
		Expect(r.Reply).To(Equal("pong from a2a-echo"))
	})

	It("cancels a task: spec.cancel on its send, the task canceled", func() {
		r := run("default", "a2a-echo", caller, "cancel", "slow one")
		Expect(r.Refused).To(BeEmpty())
		Expect(r.State).To(Equal("canceled"))
	})

	It("refuses a client without a token (401)", func() {
		Expect(run("default", "a2a-echo", "", "card", "").Refused).To(HaveSuffix(": 401"))
	})

	It("refuses a namespace the caller holds no rights in (403)", func() {
		Expect(run("kube-system", "a2a-echo", caller, "card", "").Refused).To(HaveSuffix(": 403"))
	})
})

var _ = Describe("A remote A2A agent nobody here wrote, as one of our Agents' tools", Ordered, func() {
	var remote *gbytes.Buffer
	const token = "planner-secret-token"

	BeforeAll(func() {
		remote = gbytes.NewBuffer()
		url, stop, err := testenv.StartA2ARemote(io.MultiWriter(remote, GinkgoWriter), token)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(stop)
		applyReady(`apiVersion: v1
kind: Secret
metadata:
  name: planner-token
  labels: {sessions.agents.dev/agent-usable: "true"}
stringData:
  header: "Bearer `+token+`"
---
apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: tripper
spec:
  model:
    provider: scripted
    script:
    - match: "^plan "
      toolCalls: [{name: a2a__planner, arguments: {message: "{{input}}"}}]
      reply: "{{toolResults}}"
    - match: "^slowly "
      toolCalls: [{name: a2a__planner, arguments: {message: "slow {{input}}"}}]
      reply: "{{toolResults}}"
  tools:
    a2aAgents:
    - name: planner
      url: `+url+`
      headers: [{name: Authorization, valueFrom: {secretKeyRef: {name: planner-token, key: header}}}]
      timeoutSeconds: 120
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: tripper-main
spec:
  key: agent:tripper:main
  agentId: tripper
  chatType: direct
`, "tripper")
	})

	It("reports in Ready which cards were read", func() {
		out, err := kubectl("get", "agent", "tripper", "-o",
			`jsonpath={.status.conditions[?(@.type=="Ready")].message}|{.status.a2aAgents[0].cardRead}|{.status.a2aAgents[0].agentName}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal("scripted provider configured; A2A agents: planner card read|true|planner"))
	})

	It("calls it through a2a__planner: the transcript shows the call and the answer", func() {
		out, code := plugin("send", "agent:tripper:main", "plan Lisbon in May")
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("plan for: plan Lisbon in May"))
		out, code = plugin("history", "agent:tripper:main", "--include-tools", "--limit", "20")
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring(`[call a2a__planner {"message":"plan Lisbon in May"}]`))
		Expect(out).To(MatchRegexp(`toolResult a2a__planner\tplan for: plan Lisbon in May\n`))
		Eventually(remote).Should(gbytes.Say("TASK .* plan Lisbon in May"))
	})

	It("cancels the remote task when the send is cancelled", func() {
		out, err := applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata:
  name: tripper-slowly
spec:
  sessionKey: agent:tripper:main
  message: slowly to Porto
  timeoutSeconds: 0
`)
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(remote, testenv.Timeout).Should(gbytes.Say("TASK (\\S+) slow slowly to Porto"))
		out, err = kubectl("patch", "sessionsend", "tripper-slowly", "--type=merge", "-p", `{"spec":{"cancel":true}}`)
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(remote, testenv.Timeout).Should(gbytes.Say("CANCELLED"))
		out, err = kubectl("wait", "--for=jsonpath={.status.phase}=Cancelled", "sessionsend/tripper-slowly", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
	})
})

// a2aCallerToken is a token of a new ServiceAccount that holds, in default only, the rights
// an A2A caller needs: make sessions and sends, act as its sessions, read their
// transcripts, cancel its sends.
func a2aCallerToken(prefix string) string {
	group := []string{"sessions.agents.dev"}
	return serviceAccountToken(prefix, []rbacv1.PolicyRule{
		{APIGroups: group, Resources: []string{"agents"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: group, Resources: []string{"agentsessions"}, Verbs: []string{"get", "list", "watch", "create", "act-as"}},
		{APIGroups: group, Resources: []string{"agentsessions/transcript"}, Verbs: []string{"get"}},
		{APIGroups: group, Resources: []string{"sessionsends"}, Verbs: []string{"get", "list", "watch", "create", "patch"}},
	}, devcluster.HistoryAudience)
}
