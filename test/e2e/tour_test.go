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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

func applyYAML(y string) (string, error) {
	f := filepath.Join(GinkgoT().TempDir(), "obj.yaml")
	Expect(os.WriteFile(f, []byte(y), 0o600)).To(Succeed())
	return kubectl("apply", "-f", f)
}

// applyReady applies yaml and waits until the Agent named agent is Ready.
func applyReady(yaml, agent string) {
	out, err := applyYAML(yaml)
	Expect(err).NotTo(HaveOccurred(), out)
	out, err = kubectl("wait", "--for=condition=Ready", "agent/"+agent, "--timeout=60s")
	Expect(err).NotTo(HaveOccurred(), out)
}

var _ = Describe("a user's first tour", func() {
	It("applies a send and waits for Completed with kubectl", func() {
		out, err := applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata:
  name: e2e-ping
spec:
  sessionKey: agent:main:main
  message: ping
`)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("wait", "--for=condition=Completed", "sessionsend/e2e-ping", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "sessionsend/e2e-ping", "-o", "jsonpath={.status.status} {.status.reply}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(Equal("ok pong"))
	})

	It("prints the webhook's reason for a denied send", func() {
		out, err := applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata:
  name: e2e-denied
spec:
  sessionKey: agent:main:discord:group:general
  message: hello group
`)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("send denied by sessionPolicy default rule 1 (channel=discord, chatType=group -> deny)"))
	})

	It("runs the sample spawn through its announce in the requester's transcript", func() {
		out, err := kubectl("wait", "--for=condition=Completed", "subagentrun/research-llamas", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, code := plugin("history", "agent:main:main", "--limit", "50")
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("Sub-agent announce step."))
		Expect(out).To(ContainSubstring("Status: succeeded"))
	})

	It("cancels a running sub-agent run with kubectl-sessions cancel", func() {
		out, err := applyYAML(slowAgent("slowpoke") + `---
apiVersion: sessions.agents.dev/v1alpha1
kind: SubagentRun
metadata:
  name: e2e-slow
spec:
  agentId: slowpoke
  task: slow work
`)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("wait", "--for=jsonpath={.status.phase}=Running", "subagentrun/e2e-slow", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, code := plugin("cancel", "subagentrun/e2e-slow")
		Expect(code).To(Equal(0), out)
		out, err = kubectl("wait", "--for=condition=Cancelled", "subagentrun/e2e-slow", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "subagentrun/e2e-slow", "-o", "jsonpath={.status.phase} {.spec.cancel}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(Equal("Cancelled true"))
	})

	It("sends with kubectl-sessions and prints the reply, or fails with a non-zero exit", func() {
		out, code := plugin("send", "agent:main:main", "ping")
		Expect(code).To(Equal(0), out)
		Expect(strings.TrimSpace(out)).To(Equal("pong"))
		out, code = plugin("send", "agent:main:discord:group:general", "hi")
		Expect(code).NotTo(Equal(0))
		Expect(out).To(ContainSubstring("send denied by sessionPolicy default rule 1"))
	})

	It("lists sessions and explains the policy", func() {
		out, code := plugin("list", "--kinds", "main")
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("agent:main:main"))
		Expect(out).NotTo(ContainSubstring("discord:group"))
		out, code = plugin("policy", "explain", "agent:main:main", "agent:main:discord:group:general")
		Expect(code).To(Equal(0), out) // a decision was printed: denied is an answer, not a failure
		Expect(out).To(ContainSubstring("send policy: denied"))
		Expect(out).NotTo(ContainSubstring("error:"))
	})

	It("follows a session's history and receives a message appended meanwhile", func() {
		fctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cmd := exec.CommandContext(fctx, filepath.Join(binDir, "kubectl-sessions"), "--kubeconfig", cluster.Kubeconfig,
			"--history-url", cluster.HistoryURL(), "--history-ca-file", cluster.HistoryCAFile, "history", "agent:research:main", "--follow", "--limit", "1")
		stdout, err := cmd.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		Expect(cmd.Start()).To(Succeed())
		var mu sync.Mutex
		var lines []string
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				mu.Lock()
				lines = append(lines, sc.Text())
				mu.Unlock()
			}
		}()
		seen := func() string { mu.Lock(); defer mu.Unlock(); return strings.Join(lines, "\n") }
		Eventually(seen, testenv.Timeout, testenv.Interval).ShouldNot(BeEmpty()) // the snapshot arrived
		out, code := plugin("send", "agent:research:main", "follow me")
		Expect(code).To(Equal(0), out)
		Eventually(seen, testenv.Timeout, testenv.Interval).Should(ContainSubstring("echo: follow me"))
		cancel()
		_ = cmd.Wait()
	})

	It("passes a server-side dry run of the whole deployment", func() {
		// cert-manager's kinds must exist for the dry run; a cluster with cert-manager has them.
		out, err := applyYAML(certManagerCRDs)
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func() error { _, err := kubectl("get", "certificates.cert-manager.io", "-A"); return err }, testenv.Timeout, testenv.Interval).Should(Succeed())
		// A dry run persists nothing, so the namespace it creates must exist for the rest.
		out, err = kubectl("create", "namespace", "agent-session-operator-system")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("apply", "--dry-run=server", "-k", filepath.Join(testenv.RepoRoot(), "config", "default"))
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("deployment.apps/agent-session-operator-controller-manager created (server dry run)"))
	})
})

// certManagerCRDs stand in for cert-manager's own CRDs: the kinds, with open schemas.
const certManagerCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.cert-manager.io
spec:
  group: cert-manager.io
  names: {kind: Certificate, listKind: CertificateList, plural: certificates, singular: certificate}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: issuers.cert-manager.io
spec:
  group: cert-manager.io
  names: {kind: Issuer, listKind: IssuerList, plural: issuers, singular: issuer}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// slowAgent is an Agent whose turns on "slow ..." take ten minutes: runs to cancel.
func slowAgent(name string) string {
	return `apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: ` + name + `
spec:
  model:
    provider: scripted
    script:
    - match: "^slow"
      delay: 10m
      reply: late
`
}
