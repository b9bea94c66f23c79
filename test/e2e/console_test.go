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

// The console against the whole system: the manager runs the sends and the run, the
// sidecar serves the page, /events and the console's actions over TLS, and every step is
// a person at a keyboard in real Chromium. Screenshots go to test/e2e/artifacts/.
var _ = Describe("the web console", Ordered, func() {
	const open = "agent:main:main"
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

	BeforeAll(func() {
		// The history listener's certificate is self-signed for this run.
		bctx = chromiumtest.Start(GinkgoT(), context.Background(), chromedp.Flag("ignore-certificate-errors", true))
		// The browser belongs to the context of its first Run: start it on bctx itself, so
		// that the per-step timeouts below do not close it.
		Expect(chromedp.Run(bctx)).To(Succeed())
		run(
			chromedp.Navigate(cluster.HistoryURL()+"/"),
			chromedp.WaitVisible("#signin"),
			chromedp.SendKeys("#token", cluster.Token, chromedp.ByID),
			chromedp.Focus("#namespace", chromedp.ByID),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible("#app"),
		)
	})

	It("lists the sessions there are at sign-in and opens one by keyboard", func() {
		button := `//table[@id="sessions"]//button[normalize-space()="` + open + `"]`
		run(
			chromedp.WaitVisible(button, chromedp.BySearch),
			chromedp.Focus(button, chromedp.BySearch),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible("#send", chromedp.ByID),
			chromiumtest.Shot(artifacts, "console-signed-in.png"),
		)
	})

	It("shows a send made with kubectl live in the open transcript", func() {
		var before int
		run(chromedp.Evaluate(`document.querySelectorAll("#transcript li").length`, &before))
		out, code := plugin("send", open, "ping from kubectl")
		Expect(code).To(Equal(0), out)
		run(chromedp.WaitVisible(`//ol[@id="transcript"]/li[contains(., "ping from kubectl")]`, chromedp.BySearch))
	})

	It("sends a message typed in the console, and the send completes", func() {
		run(
			chromedp.Focus("#message", chromedp.ByID),
			chromedp.KeyEvent("ping from the console"),
			chromedp.KeyEvent(kb.Tab), // to Send
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`//ol[@id="transcript"]/li[contains(., "ping from the console")]`, chromedp.BySearch),
			chromedp.WaitVisible(`#work li[data-phase="Completed"]`, chromedp.ByQuery),
			chromiumtest.Shot(artifacts, "console-send.png"),
		)
		var name string
		run(chromedp.AttributeValue(`#work li[data-phase="Completed"]`, "data-name", &name, nil, chromedp.ByQuery))
		out, err := kubectl("get", "sessionsend", name, "-o", "jsonpath={.status.status} {.status.reply} {.spec.fromSessionKey}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.TrimSpace(out)).To(Equal("ok pong"), "a person's send, answered")
	})

	It("cancels a slow run from the console, and it ends Cancelled", func() {
		out, err := applyYAML(slowAgent("console-slow") + `---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: console-slow-main
spec:
  key: agent:console-slow:main
  agentId: console-slow
  chatType: direct
`)
		Expect(err).NotTo(HaveOccurred(), out)
		// The new session arrives on the event stream; open it.
		button := `//table[@id="sessions"]//button[normalize-space()="agent:console-slow:main"]`
		run(
			chromedp.WaitVisible(button, chromedp.BySearch),
			chromedp.Focus(button, chromedp.BySearch),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`//h2[@id="detail-h"][normalize-space()="agent:console-slow:main"]`, chromedp.BySearch),
		)
		out, err = applyYAML(`
apiVersion: sessions.agents.dev/v1alpha1
kind: SubagentRun
metadata:
  name: console-slow
spec:
  agentId: console-slow
  requesterSessionKey: agent:console-slow:main
  task: slow work from the console test
`)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("wait", "--for=jsonpath={.status.phase}=Running", "subagentrun/console-slow", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		cancel := `button[aria-label="Cancel run console-slow"]`
		run(
			chromedp.WaitVisible(cancel, chromedp.ByQuery),
			chromedp.Focus(cancel, chromedp.ByQuery),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`#work li[data-name="console-slow"][data-phase="Cancelled"]`, chromedp.ByQuery),
			chromiumtest.Shot(artifacts, "console-cancel.png"),
		)
		out, err = kubectl("get", "subagentrun/console-slow", "-o", "jsonpath={.status.phase} {.spec.cancel}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(Equal("Cancelled true"))
	})

	It("shows the sends a session already had when it is opened again", func() {
		button := `//table[@id="sessions"]//button[normalize-space()="` + open + `"]`
		run(
			chromedp.Focus(button, chromedp.BySearch),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`//h2[@id="detail-h"][normalize-space()="`+open+`"]`, chromedp.BySearch),
			// No event brings these: the list at opening does.
			chromedp.WaitVisible(`#work li[data-phase="Completed"]`, chromedp.ByQuery),
			chromiumtest.Shot(artifacts, "console-reopened.png"),
		)
	})
})
