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

package browsertest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/console/chromiumtest"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecartest"
)

// TestConsoleSandboxInChromium: an open sandboxed session shows its sandbox (state, Pod,
// runtime, last use) from the first list, follows it live when the sandbox is suspended,
// and a session without one shows none.
func TestConsoleSandboxInChromium(t *testing.T) {
	artifacts, _ := filepath.Abs("artifacts")
	cfg, c, kubeconfig := startControlPlane(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	token := viewerToken(t, ctx, cfg)

	const boxed, plain = "agent:coder:main", "agent:chat:main"
	used := metav1.NewTime(time.Now().Add(-2 * time.Minute).Truncate(time.Second))
	createSession(t, ctx, c, boxed, "", sessionsv1alpha1.AgentSessionStatus{SessionID: "s-boxed", Sandbox: &sessionsv1alpha1.SessionSandboxStatus{
		Claim: "coder-main", Sandbox: "coder-main", Phase: sessionsv1alpha1.SandboxReady, RuntimeClassName: "gvisor", LastUsed: &used}})
	createSession(t, ctx, c, plain, "", sessionsv1alpha1.AgentSessionStatus{SessionID: "s-plain"})

	a := sidecartest.Start(t, transcriptstore.SidecarConfig{DefaultNamespace: "default", Kubeconfig: kubeconfig})
	run := signedIn(t, ctx, a.Public, token, chromedp.WaitVisible(`//table[@id="sessions"]//button[normalize-space()="`+plain+`"]`, chromedp.BySearch))
	open := func(key string) chromedp.Action {
		return chromedp.Tasks{chromedp.Focus(`#sessions tr[data-key="`+key+`"] button`, chromedp.ByQuery), chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`//h2[@id="detail-h" and normalize-space()="`+key+`"]`, chromedp.BySearch)}
	}

	var text string
	run("open the sandboxed session", open(boxed),
		chromedp.WaitVisible(`#sandbox[data-phase="Ready"]`, chromedp.ByQuery),
		chromedp.Text("#sandbox", &text, chromedp.ByID),
		chromiumtest.Shot(artifacts, "console-sandbox.png"))
	for _, want := range []string{"Sandbox: Ready", "Pod coder-main", "runtime gvisor", "last used 2m ago"} {
		if !strings.Contains(text, want) {
			t.Errorf("sandbox line %q lacks %q", text, want)
		}
	}

	// Suspended after its idle time: the line follows the session's status live.
	s := &sessionsv1alpha1.AgentSession{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: sessionkey.ObjectName(boxed)}, s); err != nil {
		t.Fatal(err)
	}
	s.Status.Sandbox.Phase = sessionsv1alpha1.SandboxSuspended
	if err := c.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	run("the suspended sandbox, live",
		chromedp.WaitVisible(`#sandbox[data-phase="Suspended"]`, chromedp.ByQuery),
		chromedp.Text("#sandbox", &text, chromedp.ByID))
	if !strings.HasPrefix(text, "Sandbox: Suspended · Pod coder-main") {
		t.Errorf("sandbox line after suspend = %q", text)
	}

	var hidden bool
	run("open the session without a sandbox", open(plain),
		chromedp.Evaluate(`document.getElementById("sandbox").hidden`, &hidden))
	if !hidden {
		t.Error("a session without a sandbox shows a sandbox line")
	}
}
