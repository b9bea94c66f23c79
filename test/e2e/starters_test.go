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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Sessions that start themselves, through the built binaries: a schedule's tick and a signed
// hook delivery each end in a completed send.
var _ = Describe("schedules and hooks", func() {
	It("sends a * * * * * schedule's tick into cron:<name>, completed within 70 s", func() {
		manifest := `apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSchedule
metadata: {name: heartbeat, namespace: default}
spec: {schedule: "* * * * *", agentId: main, message: ping, timeoutSeconds: 30}
`
		Expect(apply(manifest)).To(Succeed())
		DeferCleanup(func() { _, _ = kubectl("delete", "sessionschedule", "heartbeat", "-n", "default") })
		Eventually(func(g Gomega) {
			out, err := kubectl("get", "sessionsends", "-n", "default", "-l", "sessions.agents.dev/schedule=heartbeat",
				"-o", `jsonpath={range .items[*]}{.spec.sessionKey} target={.status.targetSessionKey} {.status.phase} {.status.reply}{"\n"}{end}`)
			g.Expect(err).NotTo(HaveOccurred(), out)
			// The tick names the key itself, so the status does not repeat it (targetSessionKey
			// is set only for a target named by main or a sessionId).
			g.Expect(strings.Split(strings.TrimSpace(out), "\n")).To(ContainElement("cron:heartbeat target= Completed pong"))
		}, 70*time.Second, time.Second).Should(Succeed())
		out, code := plugin("schedules")
		Expect(code).To(Equal(0), out)
		Expect(out).To(MatchRegexp(`heartbeat\s+\* \* \* \* \*\s+UTC\s+false`))
	})

	It("turns a signed curl into a completed send into a hook: session, and the same request again into nothing", func() {
		Expect(apply(`apiVersion: v1
kind: Secret
metadata: {name: ci-hook-signing, namespace: default}
stringData: {secret: whsec_dGhlIGUyZSBob29rJ3Mgc2lnbmluZyBrZXksIDMyIGJ5dGVz}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: SessionHook
metadata: {name: ci, namespace: default}
spec:
  agentId: main
  message: ping
  signingSecretRef: {name: ci-hook-signing, key: secret}
`)).To(Succeed())
		out, err := kubectl("wait", "--timeout=60s", "-n", "default", "--for=condition=Ready", "sessionhook/ci")
		Expect(err).NotTo(HaveOccurred(), out)
		url, err := kubectl("get", "sessionhook", "ci", "-n", "default", "-o", "jsonpath={.status.url}")
		Expect(err).NotTo(HaveOccurred(), url)
		Expect(url).To(Equal(cluster.HistoryURL() + "/hooks/default/ci"))

		// The curl of docs/tasks/trigger-from-a-webhook.md, with the signature made by openssl.
		script := `set -eu
SECRET=whsec_dGhlIGUyZSBob29rJ3Mgc2lnbmluZyBrZXksIDMyIGJ5dGVz
KEY_HEX=$(printf %s "${SECRET#whsec_}" | base64 -d | od -An -tx1 | tr -d ' \n')
ID=msg_e2e TS=$(date +%s) BODY='{"event":"build","status":"failed"}'
SIG=$(printf %s "$ID.$TS.$BODY" | openssl dgst -sha256 -mac HMAC -macopt hexkey:$KEY_HEX -binary | base64)
for i in 1 2; do
  curl --cacert "$CA" -sS -w ' %{http_code}\n' "$URL" \
    -H "webhook-id: $ID" -H "webhook-timestamp: $TS" -H "webhook-signature: v1,$SIG" \
    -H 'content-type: application/json' -d "$BODY"
done`
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = append(cmd.Environ(), "CA="+cluster.HistoryCAFile, "URL="+url)
		b, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(b))
		// Each answer: its JSON body (ending in a newline), then curl's status code.
		lines := strings.Fields(string(b))
		Expect(lines).To(HaveLen(4), string(b))
		type answer struct {
			Send       string `json:"send"`
			SessionKey string `json:"sessionKey"`
		}
		var first, again answer
		Expect(lines[1]).To(Equal("202"), string(b))
		Expect(json.Unmarshal([]byte(lines[0]), &first)).To(Succeed())
		Expect(lines[3]).To(Equal("200"), string(b))
		Expect(json.Unmarshal([]byte(lines[2]), &again)).To(Succeed())
		Expect(again).To(Equal(first))
		Expect(first.SessionKey).To(HavePrefix("hook:"))

		out, err = kubectl("wait", "--timeout=60s", "-n", "default", "--for=condition=Completed", "sessionsend/"+first.Send)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "sessionsends", "-n", "default", "-l", "sessions.agents.dev/hook=ci", "-o", "name")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.Fields(out)).To(HaveLen(1))
		out, err = kubectl("get", "sessionsend", first.Send, "-n", "default", "-o", "jsonpath={.spec.sessionKey} target={.status.targetSessionKey} {.status.reply}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(Equal(first.SessionKey + " target= pong"))
	})
})

// apply applies a manifest with kubectl.
func apply(manifest string) error {
	GinkgoHelper()
	path := filepath.Join(GinkgoT().TempDir(), "manifest.yaml")
	Expect(os.WriteFile(path, []byte(manifest), 0o600)).To(Succeed())
	out, err := kubectl("apply", "-f", path)
	if err != nil {
		return fmt.Errorf("kubectl apply: %w: %s", err, out)
	}
	return nil
}
