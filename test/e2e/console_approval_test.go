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
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/console/chromiumtest"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// A person decides a tool call from the console: the manager makes the call wait, the
// page shows it live, and the decision is made as the signed-in person. The spec keeps to
// a namespace of its own, so its ToolApprovals never meet the pages' tour steps'.
var _ = Describe("the web console's approvals", Ordered, func() {
	const (
		ns  = "console-approvals"
		key = "agent:gatekeeper:main"
	)
	var (
		bctx      context.Context
		artifacts = filepath.Join(testenv.RepoRoot(), "test", "e2e", "artifacts")
	)
	run := func(actions ...chromedp.Action) {
		GinkgoHelper()
		ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
		defer cancel()
		Expect(chromedp.Run(ctx, actions...)).To(Succeed())
	}
	get := func(what, jsonpath string) string {
		GinkgoHelper()
		out, err := kubectl("-n", ns, "get", what, "-o", "jsonpath="+jsonpath)
		Expect(err).NotTo(HaveOccurred(), out)
		return out
	}
	// send types message into the open session's Send box, as a person does.
	send := func(message string) {
		GinkgoHelper()
		run(
			chromedp.Focus("#message", chromedp.ByID),
			chromedp.KeyEvent(message),
			chromedp.KeyEvent(kb.Tab), // to Send
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`//ol[@id="transcript"]/li[contains(., "`+message+`")]`, chromedp.BySearch),
		)
	}
	// waiting waits until the page shows a call waiting in the open session whose
	// arguments hold text, and returns the approval's name and its send's.
	waiting := func(text string) (approval, sendName string) {
		GinkgoHelper()
		item := `//ul[@id="session-approvals"]/li[.//pre[contains(., "` + text + `")]]`
		run(
			chromedp.WaitVisible(item, chromedp.BySearch),
			chromedp.AttributeValue(item, "data-name", &approval, nil, chromedp.BySearch),
		)
		return approval, get("toolapproval/"+approval, "{.spec.owner.name}")
	}

	BeforeAll(func() {
		out, err := kubectl("create", "namespace", ns)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: gatekeeper
  namespace: ` + ns + `
spec:
  model:
    provider: scripted
    script:
    - match: "^echo "
      toolCalls:
      - name: mcp__everything__echo
        arguments: {message: "{{input}}"}
      reply: "{{toolResults}}"
  tools:
    mcpServers:
    - {name: everything, url: ` + cluster.EverythingURL + `, allowedTools: [echo], timeoutSeconds: 20}
    approval:
      rules:
      - {tools: ["mcp__everything__*"], action: require, timeoutSeconds: 600}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: gatekeeper-main
  namespace: ` + ns + `
spec:
  key: ` + key + `
  agentId: gatekeeper
  chatType: direct
`)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("-n", ns, "wait", "--for=condition=Ready", "agent/gatekeeper", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)

		bctx = chromiumtest.Start(GinkgoT(), context.Background(), chromedp.Flag("ignore-certificate-errors", true))
		Expect(chromedp.Run(bctx)).To(Succeed()) // the browser lives as long as bctx
		button := `//table[@id="sessions"]//button[normalize-space()="` + key + `"]`
		run(
			chromedp.Navigate(cluster.HistoryURL()+"/"),
			chromedp.WaitVisible("#signin"),
			chromedp.SendKeys("#token", cluster.Token, chromedp.ByID),
			chromedp.SetValue("#namespace", ns, chromedp.ByID),
			chromedp.Focus("#namespace", chromedp.ByID),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(button, chromedp.BySearch),
			chromedp.Focus(button, chromedp.BySearch),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible("#send", chromedp.ByID),
			// Opening ends by focusing the session's heading once its history is read: typing
			// before then would lose keys to that move.
			chromedp.Poll(`document.activeElement === document.getElementById("detail-h")`, nil),
		)
	})

	AfterEach(func() {
		if !CurrentSpecReport().Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(bctx, 10*time.Second)
		defer cancel()
		_ = chromedp.Run(ctx, chromiumtest.Shot(artifacts, "console-approval-failed.png"))
		out, _ := kubectl("-n", ns, "get", "sessionsends,toolapprovals", "-o", "wide")
		GinkgoWriter.Println(out)
	})

	It("shows a waiting call live; Approve runs it and its result arrives in the transcript", func() {
		send("echo approve from the page")
		name, sendName := waiting("echo approve from the page")
		// The same call in the namespace's list, its arguments indented JSON.
		var args, what string
		run(
			chromedp.WaitVisible(`#approvals li[data-name="`+name+`"]`, chromedp.ByQuery),
			chromedp.Text(`#approvals li[data-name="`+name+`"] pre.args`, &args, chromedp.ByQuery),
			chromedp.Text(`#approvals li[data-name="`+name+`"] .what`, &what, chromedp.ByQuery),
			chromiumtest.Shot(artifacts, "console-approval-waiting.png"),
		)
		Expect(args).To(Equal("{\n  \"message\": \"echo approve from the page\"\n}"))
		Expect(what).To(ContainSubstring("mcp__everything__echo in " + key + " · SessionSend/" + sendName))
		Expect(get("sessionsend/"+sendName, "{.status.phase}")).To(Equal("AwaitingApproval"))

		approve := `#session-approvals button[aria-label="Approve ` + name + `"]`
		run(
			chromedp.Focus(approve, chromedp.ByQuery),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`//ol[@id="transcript"]/li[contains(@class, "toolResult")][contains(., "Echo: echo approve from the page")]`, chromedp.BySearch),
			chromedp.WaitVisible(`#work li[data-name="`+sendName+`"][data-phase="Completed"]`, chromedp.ByQuery),
			// Decided, it leaves both lists.
			chromedp.WaitNotPresent(`#approvals li[data-name="`+name+`"]`, chromedp.ByQuery),
			chromedp.WaitNotPresent(`#session-approvals li[data-name="`+name+`"]`, chromedp.ByQuery),
			chromiumtest.Shot(artifacts, "console-approval-approved.png"),
		)
		// Made as the signed-in person: the webhook recorded who.
		Expect(get("toolapproval/"+name, "{.status.phase} {.status.decidedBy}")).To(Equal("Approved system:serviceaccount:default:dev-admin"))
		Expect(get("sessionsend/"+sendName, "{.status.status}|{.status.reply}")).To(Equal("ok|Echo: echo approve from the page"))
	})

	It("asks a reason to deny, and the model is told denied: <reason>", func() {
		send("echo deny from the page")
		name, sendName := waiting("echo deny from the page")
		reason := "#session-approvals-reason-" + name
		deny := `#session-approvals button[aria-label="Deny ` + name + `"]`
		// Deny without a reason decides nothing: the reason box takes the focus.
		var focused string
		run(
			chromedp.Focus(deny, chromedp.ByQuery),
			chromedp.KeyEvent(kb.Enter),
			chromedp.Evaluate(`document.activeElement.id`, &focused),
		)
		Expect(focused).To(Equal(strings.TrimPrefix(reason, "#")))
		Expect(get("toolapproval/"+name, "{.spec.decision}")).To(BeEmpty())

		run(
			chromedp.KeyEvent("not from the console test"),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`//ol[@id="transcript"]/li[contains(@class, "toolResult")][contains(., "denied: not from the console test")]`, chromedp.BySearch),
			chromedp.WaitVisible(`#work li[data-name="`+sendName+`"][data-phase="Completed"]`, chromedp.ByQuery),
			chromedp.WaitNotPresent(`#approvals li[data-name="`+name+`"]`, chromedp.ByQuery),
			chromiumtest.Shot(artifacts, "console-approval-denied.png"),
		)
		Expect(get("toolapproval/"+name, "{.status.phase} {.spec.reason} {.status.decidedBy}")).
			To(Equal("Denied not from the console test system:serviceaccount:default:dev-admin"))
	})

	It("takes a call decided elsewhere off the page live", func() {
		send("echo decided with kubectl")
		name, sendName := waiting("echo decided with kubectl")
		out, code := plugin("-n", ns, "deny", name, "--reason", "kubectl said no")
		Expect(code).To(Equal(0), out)
		run(
			chromedp.WaitNotPresent(`#session-approvals li[data-name="`+name+`"]`, chromedp.ByQuery),
			chromedp.WaitNotPresent(`#approvals li[data-name="`+name+`"]`, chromedp.ByQuery),
			chromedp.WaitVisible(`//ol[@id="transcript"]/li[contains(@class, "toolResult")][contains(., "denied: kubectl said no")]`, chromedp.BySearch),
			chromedp.WaitVisible(`#work li[data-name="`+sendName+`"][data-phase="Completed"]`, chromedp.ByQuery),
		)
	})
})
