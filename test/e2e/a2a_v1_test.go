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

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// a2aClientV1 is a Node script on the A2A JavaScript SDK's client (@a2a-js/sdk) on A2A 1.0
// only (no 0.3 compatibility): it reads the card at BASE and picks the card's BINDING
// (JSONRPC or HTTP+JSON) interface of 1.0, then reads the card, sends, streams, lists or
// cancels, or checks the card's signature with the SDK's verifier (npm jose) against the
// JWKS the server publishes, and a tampered copy of it; it prints what it got as JSON.
const a2aClientV1 = `
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory, DefaultAgentCardResolver } from "file://SDK/client/index.js";
import { verifyAgentCardSignature } from "file://SDK/index.js";
import * as jose from "file://SDK/../../../jose/dist/webapi/index.js";
const [base, token, binding, what, message] = process.argv.slice(2);
const out = (o) => console.log(JSON.stringify(o));
const fetchImpl = (url, init = {}) => {
  const headers = new Headers(init.headers || {});
  if (token) headers.set("Authorization", "Bearer " + token);
  return fetch(url, { ...init, headers });
};
const factory = new ClientFactory({
  transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
  cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  preferredTransports: [binding],
});
const text = (parts) => (parts || []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const msg = (t, contextId) => ({ message: { messageId: crypto.randomUUID(), role: 1, contextId: contextId || "", parts: [{ content: { $case: "text", value: t } }] } });
const STATES = ["unspecified", "submitted", "working", "completed", "failed", "canceled", "input-required", "rejected", "auth-required"];
const state = (t) => STATES[t.status?.state] ?? String(t.status?.state);
if (what === "verify") {
  const raw = await (await fetchImpl(new URL(".well-known/agent-card.json", base), { headers: { "A2A-Version": "1.0" } })).json();
  const jwks = jose.createLocalJWKSet(await (await fetch(new URL("/a2a/.well-known/jwks.json", base))).json());
  const verify = verifyAgentCardSignature(async (kid) => {
    const alg = JSON.parse(Buffer.from(raw.signatures[0].protected, "base64url").toString()).alg;
    return jwks({ kid, alg });
  });
  const ok = async (card) => { try { await verify(card); return true; } catch { return false; } };
  out({ verified: await ok(raw), tamperedVerified: await ok({ ...raw, description: "tampered" }), signatures: (raw.signatures || []).length });
  process.exit(0);
}
let client;
try {
  client = await factory.createFromUrl(base);
} catch (e) {
  out({ refused: String(e) });
  process.exit(0);
}
if (what === "card") {
  const card = await client.getAgentCard();
  out({ name: card.name, streaming: card.capabilities?.streaming, protocol: client.protocolVersion,
    interfaces: card.supportedInterfaces.map((i) => i.protocolBinding + " " + i.protocolVersion) });
} else if (what === "send") {
  const r = await client.sendMessage(msg(message));
  const t = r.payload?.value ?? r;
  out({ id: t.id, contextId: t.contextId, state: state(t), reply: text(t.artifacts?.[0]?.parts) });
} else if (what === "stream") {
  const events = [];
  let reply = "";
  for await (const ev of client.sendMessageStream(msg(message))) {
    const p = ev.payload;
    if (p.$case === "task") events.push("task:" + state(p.value));
    if (p.$case === "artifactUpdate") { events.push("artifact"); reply = text(p.value.artifact?.parts); }
    if (p.$case === "statusUpdate") events.push("status:" + state(p.value));
  }
  out({ events: events.filter((e, i) => e !== "artifact" || events[i + 1] !== "artifact"), reply });
} else if (what === "list") {
  const r = await client.sendMessage(msg(message));
  const t = r.payload?.value ?? r;
  const mine = await client.listTasks({ contextId: t.contextId, pageSize: 10 });
  const other = await client.listTasks({ contextId: "no-such-context", pageSize: 10 });
  out({ id: t.id, listed: mine.tasks.map((x) => x.id), other: other.tasks.length });
} else if (what === "cancel") {
  const r = await client.sendMessage({ ...msg(message), configuration: { returnImmediately: true, acceptedOutputModes: [] } });
  const started = r.payload?.value ?? r;
  let t = await client.cancelTask({ id: started.id });
  for (let i = 0; i < 300 && state(t) !== "canceled"; i++) {
    await new Promise((res) => setTimeout(res, 200));
    t = await client.getTask({ id: started.id });
  }
  out({ id: started.id, started: state(started), state: state(t) });
}
`

type a2aV1Result struct {
	a2aResult
	Interfaces       []string `json:"interfaces"`
	Listed           []string `json:"listed"`
	Other            int      `json:"other"`
	Verified         bool     `json:"verified"`
	TamperedVerified bool     `json:"tamperedVerified"`
	Signatures       int      `json:"signatures"`
}

var _ = Describe("Agents over A2A 1.0 to a client nobody here wrote", Ordered, func() {
	var script, node, caller string

	run := func(binding, what, message string) a2aV1Result {
		var r a2aV1Result
		runNodeJSON(node, script, &r, cluster.HistoryURL()+"/a2a/default/a2a-one/", caller, binding, what, message)
		return r
	}

	BeforeAll(func() {
		node, script = nodeScript("a2a-client-v1.mjs", a2aClientV1, testenv.MCPPackages.A2ASDK)
		caller = a2aCallerToken("a2a-one-caller-")
		applyReady(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: a2a-one
spec:
  description: answers ping with pong in A2A 1.0
  model:
    provider: scripted
    script:
    - match: "^ping"
      reply: "pong from a2a-one"
    - match: "^slow"
      delay: 120s
      reply: "too late"
`, "a2a-one")
	})

	for _, binding := range []string{"JSONRPC", "HTTP+JSON"} {
		It("reads the card and speaks A2A 1.0 over "+binding, func() {
			r := run(binding, "card", "")
			Expect(r.Refused).To(BeEmpty())
			Expect([]any{r.Name, r.Streaming, r.Protocol}).To(Equal([]any{"a2a-one", true, "1.0"}))
			Expect(r.Interfaces).To(Equal([]string{"JSONRPC 1.0", "HTTP+JSON 1.0", "JSONRPC 0.3"}))
		})

		It("sends over "+binding+": the reply is the completed task's artifact", func() {
			r := run(binding, "send", "ping one")
			Expect([]any{r.Refused, r.State, r.Reply}).To(Equal([]any{"", "completed", "pong from a2a-one"}))
			Expect(r.ID).To(HaveSuffix("/round-1"))
		})

		It("streams over "+binding+": the task, the reply, then completed", func() {
			r := run(binding, "stream", "ping streamed")
			Expect(r.Refused).To(BeEmpty())
			Expect(r.Events).To(HaveExactElements(HavePrefix("task:"), "artifact", "status:completed"))
			Expect(r.Reply).To(Equal("pong from a2a-one"))
		})

		It("lists over "+binding+" the caller's tasks of a context", func() {
			r := run(binding, "list", "ping listed")
			Expect(r.Refused).To(BeEmpty())
			Expect(r.Listed).To(ContainElement(r.ID))
			Expect(r.Other).To(BeZero())
		})
	}

	It("cancels a slow task; its send stays findable by status.runId", func() {
		r := run("JSONRPC", "cancel", "slow one")
		Expect(r.State).To(Equal("canceled"))
		out, err := kubectl("get", "sessionsends", "-o", "jsonpath={.items[*].status.runId}")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Fields(out)).To(ContainElement(r.ID))
	})

	It("signs the card: it verifies with jose against the published JWKS, a tampered copy does not", func() {
		r := run("JSONRPC", "verify", "")
		Expect([]any{r.Signatures, r.Verified, r.TamperedVerified}).To(Equal([]any{1, true, false}))
	})
})

var _ = Describe("A remote A2A 1.0 agent nobody here wrote, its card verified", Ordered, func() {
	const token = "planner-one-token"
	remotes := map[string]string{}
	var logs = map[string]*gbytes.Buffer{}

	BeforeAll(func() {
		for _, sign := range []string{"good", "wrong", "none"} {
			logs[sign] = gbytes.NewBuffer()
			url, stop, err := testenv.StartA2ARemoteWith(io.MultiWriter(logs[sign], GinkgoWriter), token,
				testenv.A2ARemoteOptions{ProtocolVersion: "1.0", Sign: sign})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(stop)
			remotes[sign] = url
		}
		yaml := `apiVersion: v1
kind: Secret
metadata:
  name: planner-one-token
  labels: {sessions.agents.dev/agent-usable: "true"}
stringData:
  header: "Bearer ` + token + `"
`
		for _, sign := range []string{"good", "wrong", "none"} {
			yaml += `---
apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: tripper-` + sign + `
spec:
  model:
    provider: scripted
    script:
    - match: "^plan "
      toolCalls: [{name: a2a__planner, arguments: {message: "{{input}}"}}]
      reply: "{{toolResults}}"
  tools:
    a2aAgents:
    - name: planner
      url: ` + remotes[sign] + `
      headers: [{name: Authorization, valueFrom: {secretKeyRef: {name: planner-one-token, key: header}}}]
      verify: {jwksURL: "` + remotes[sign] + `/jwks.json"}
`
		}
		out, err := applyYAML(yaml)
		Expect(err).NotTo(HaveOccurred(), out)
	})

	It("verifies the signed card, speaks 1.0, and calls the agent as a2a__planner", func() {
		out, err := kubectl("wait", "--for=condition=Ready", "agent/tripper-good", "--timeout=120s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "agent", "tripper-good", "-o",
			`jsonpath={.status.a2aAgents[0].cardRead}|{.status.a2aAgents[0].signatureVerified}|{.status.a2aAgents[0].protocolVersion}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal("true|true|1.0"))
		out, err = applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: tripper-good-main
spec:
  key: agent:tripper-good:main
  agentId: tripper-good
  chatType: direct
`)
		Expect(err).NotTo(HaveOccurred(), out)
		out, code := plugin("send", "agent:tripper-good:main", "plan Porto in June")
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("plan for: plan Porto in June"))
		Eventually(logs["good"]).Should(gbytes.Say("TASK .* plan Porto in June"))
	})

	for _, sign := range []string{"wrong", "none"} {
		It("refuses a card signed "+map[string]string{"wrong": "by another key", "none": "by nobody"}[sign]+": Ready=False, CardSignatureInvalid", func() {
			Eventually(func(g Gomega) {
				out, err := kubectl("get", "agent", "tripper-"+sign, "-o",
					`jsonpath={.status.conditions[?(@.type=="Ready")].status}|{.status.conditions[?(@.type=="Ready")].reason}|{.status.a2aAgents[0].reason}`)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(out).To(Equal("False|CardSignatureInvalid|CardSignatureInvalid"))
			}, testenv.Timeout, testenv.Interval).Should(Succeed())
		})
	}
})
