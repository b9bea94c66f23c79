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

package testenv

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// a2aRemote is a remote A2A agent on the A2A JavaScript SDK's server (@a2a-js/sdk, A2A 1.0
// with its v0.3 compatibility on): the agent "planner" answers "plan for: <message>" as an
// artifact, except that a message starting with "slow" works until it is cancelled. Its card
// offers the protocol version it is given (0.3 or 1.0) and is signed (ES256, by the SDK's
// signer) when sign is "good" with the key published at /jwks.json, when "wrong" with
// another key. It requires the bearer token it is given (not for /jwks.json), prints TASK
// <id> <text> for each task it starts and CANCELLED <id> for each one cancelled.
const a2aRemote = `
import { createRequire } from "node:module";
import { DefaultRequestHandler, InMemoryTaskStore, AgentEvent } from "file://SDK/server/index.js";
import { jsonRpcHandler, agentCardHandler, UserBuilder } from "file://SDK/server/express/index.js";
import { generateAgentCardSignature } from "file://SDK/index.js";
import * as jose from "file://MODULES/jose/dist/webapi/index.js";
const express = createRequire("file://MODULES/")("express");
const [port, token, protocolVersion, sign] = process.argv.slice(2);
const base = "http://127.0.0.1:" + port;
let card = {
  name: "planner", description: "plans trips (an @a2a-js/sdk agent)", version: "1.0.0",
  supportedInterfaces: [{ url: base + "/rpc", protocolBinding: "JSONRPC", protocolVersion, tenant: "" }],
  provider: undefined, capabilities: { streaming: true, extensions: [] },
  securitySchemes: {}, securityRequirements: [], defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"],
  skills: [{ id: "plan", name: "plan", description: "plans a trip", tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
  signatures: [],
};
const text = (t) => ({ content: { $case: "text", value: t }, metadata: undefined, filename: "", mediaType: "text/plain" });
const status = (ctx, state) => AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId,
  status: { state, message: undefined, timestamp: undefined }, metadata: undefined });
const cancelled = new Set();
const executor = {
  async execute(ctx, bus) {
    const input = ctx.userMessage.parts.map((p) => p.content?.value ?? "").join("");
    console.log("TASK " + ctx.taskId + " " + input);
    bus.publish(AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId, status: { state: 2, message: undefined, timestamp: undefined },
      artifacts: [], history: [ctx.userMessage], metadata: undefined }));
    if (input.startsWith("slow")) {
      while (!cancelled.has(ctx.taskId)) await new Promise((r) => setTimeout(r, 50));
      console.log("CANCELLED " + ctx.taskId);
      bus.publish(status(ctx, 5));
      bus.finished();
      return;
    }
    bus.publish(AgentEvent.artifactUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, append: false, lastChunk: true,
      artifact: { artifactId: "plan", name: "plan", description: "", parts: [text("plan for: " + input)], metadata: undefined, extensions: [] },
      metadata: undefined }));
    bus.publish(status(ctx, 3));
    bus.finished();
  },
  async cancelTask(taskId) { cancelled.add(taskId); },
};
const keys = await jose.generateKeyPair("ES256", { extractable: true });
const publicJWK = { ...(await jose.exportJWK(keys.publicKey)), kid: "planner-key", alg: "ES256", use: "sig" };
if (sign === "good" || sign === "wrong") {
  const signer = sign === "good" ? keys.privateKey : (await jose.generateKeyPair("ES256")).privateKey;
  card = await generateAgentCardSignature(signer, { alg: "ES256", kid: "planner-key", typ: "JOSE" })(card);
}
const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
const app = express();
app.get("/jwks.json", (_req, res) => res.json({ keys: [publicJWK] }));
app.use((req, res, next) => {
  if (req.headers.authorization !== "Bearer " + token) { res.status(401).end(); return; }
  next();
});
const legacyCompat = { enabled: true };
app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler, legacyCompat }));
app.use("/rpc", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
app.listen(Number(port), "127.0.0.1", () => console.log("LISTENING " + base));
`

// A2ARemoteOptions say what the remote agent's card offers: its protocol version (0.3 when
// empty) and its signature ("good", "wrong", or none when empty).
type A2ARemoteOptions struct {
	ProtocolVersion string
	Sign            string
}

// StartA2ARemote runs the remote A2A agent "planner" on the A2A JavaScript SDK's server on a
// free loopback port, requiring token, its output to log, and waits until it listens. Its
// card offers A2A 0.3, unsigned. It returns the agent's base URL (its card is at
// /.well-known/agent-card.json) and a stop function.
func StartA2ARemote(log io.Writer, token string) (string, func(), error) {
	return StartA2ARemoteWith(log, token, A2ARemoteOptions{})
}

// StartA2ARemoteWith is StartA2ARemote with the card o describes; its JWKS is at /jwks.json.
func StartA2ARemoteWith(log io.Writer, token string, o A2ARemoteOptions) (string, func(), error) {
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = "0.3"
	}
	if o.Sign == "" {
		o.Sign = "none"
	}
	pkgs, err := MCPNPM()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "a2a-remote-")
	if err != nil {
		return "", nil, err
	}
	script := filepath.Join(dir, "planner.mjs")
	src := strings.NewReplacer("file://SDK", "file://"+pkgs.A2ASDK(), "file://MODULES/", "file://"+filepath.Join(pkgs.Dir, "node_modules")+"/").Replace(a2aRemote)
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		return "", nil, err
	}
	addr, stop, err := startListening("the remote A2A agent", log, func(port string) *exec.Cmd {
		return exec.Command(pkgs.Node(), script, port, token, o.ProtocolVersion, o.Sign)
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return "http://" + addr, func() { stop(); _ = os.RemoveAll(dir) }, nil
}
