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

package a2atools

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// cardSDKScript runs on the A2A JavaScript SDK (@a2a-js/sdk) and its jose: it verifies the
// card we signed (argv: card, JWKS) with verifyAgentCardSignature, signs the same card with
// generateAgentCardSignature (ES256, a new key) and prints both, with the new key's JWKS.
const cardSDKScript = `
import { generateAgentCardSignature, verifyAgentCardSignature } from "file://SDK/index.js";
import * as jose from "file://SDK/../../../jose/dist/webapi/index.js";
const [ours, ourJWKS] = process.argv.slice(2).map((s) => JSON.parse(s));
const keySet = jose.createLocalJWKSet(ourJWKS);
let oursVerified = false;
try {
  await verifyAgentCardSignature(async (kid) => keySet({ kid, alg: JSON.parse(Buffer.from(ours.signatures[0].protected, "base64url")).alg }))(ours);
  oursVerified = true;
} catch {}
const keys = await jose.generateKeyPair("ES256", { extractable: true });
const card = { ...ours };
delete card.signatures;
const signed = await generateAgentCardSignature(keys.privateKey, { alg: "ES256", kid: "js-key", typ: "JOSE" })(card);
const jwks = { keys: [{ ...(await jose.exportJWK(keys.publicKey)), kid: "js-key", alg: "ES256", use: "sig" }] };
console.log(JSON.stringify({ oursVerified, signed, jwks }));
`

// Cards signed here verify with the JavaScript SDK's verifier, and cards its signer signs
// verify here: the same canonical form both ways, with the members that tripped it before
// (a bool with presence at false, one without, 0.3 fields beside the 1.0 ones, a security
// requirement as a2a-go writes it).
func TestCardSignaturesWithTheJavaScriptSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Node with the A2A JavaScript SDK")
	}
	pkgs, err := testenv.MCPNPM()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "card.mjs")
	if err := os.WriteFile(script, []byte(strings.ReplaceAll(cardSDKScript, "file://SDK", "file://"+pkgs.A2ASDK())), 0o600); err != nil {
		t.Fatal(err)
	}
	key := newCardKey(t)
	// a2a-go writes a security requirement's scheme as a bare list; the SDK reads it as empty.
	card := strings.Replace(strings.Replace(cardJSON, `"streaming":true`, `"streaming":false`, 1), `"iconUrl":""`,
		`"iconUrl":"","securitySchemes":{"k8s":{"httpAuthSecurityScheme":{"scheme":"Bearer"},"type":"http"}},"securityRequirements":[{"schemes":{"k8s":[]}}]`, 1)
	ours, err := key.Sign([]byte(card))
	if err != nil {
		t.Fatal(err)
	}
	ourJWKS, err := key.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pkgs.Node(), script, string(ours), string(ourJWKS)).Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	// The SDK's verifier logs each refused signature on stdout: the result is the last line.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var got struct {
		OursVerified bool            `json:"oursVerified"`
		Signed       json.RawMessage `json:"signed"`
		JWKS         jose.JSONWebKeySet
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !got.OursVerified {
		t.Errorf("the SDK's verifier refused our signed card:\n%s", ours)
	}
	if err := VerifyCard(got.Signed, &got.JWKS); err != nil {
		t.Errorf("the card the SDK signed does not verify here: %v\n%s", err, got.Signed)
	}
	tampered := []byte(strings.Replace(string(got.Signed), "plans trips", "does anything", 1))
	if err := VerifyCard(tampered, &got.JWKS); err == nil {
		t.Error("a tampered copy of the SDK's card verifies")
	}
}
