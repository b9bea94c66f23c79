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
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/console/chromiumtest"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	storeclient "github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecartest"
)

// TestConsoleApprovalsInChromium is a person deciding tool calls in the console: ToolApprovals
// in a real API server (envtest; no manager runs, so the test writes their status as the
// operator would), the real sidecar, real Chromium. The whole path through the manager and
// the webhook is in test/e2e.
func TestConsoleApprovalsInChromium(t *testing.T) {
	artifacts, _ := filepath.Abs("artifacts")
	cfg, c, kubeconfig := startControlPlane(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	token := approverToken(t, ctx, cfg, "console-approver")

	for id, key := range map[string]string{"s-main": mainKey, "s-ops": groupKey, "s-c1": child1} {
		createSession(t, ctx, c, key, "", sessionsv1alpha1.AgentSessionStatus{SessionID: id})
	}
	createRun(t, ctx, c, "research", mainKey, child1, sessionsv1alpha1.RunRunning, nil)
	// The main session's own call, one of the run under it, and one of another session
	// whose arguments are long enough to be cut.
	createApproval(t, ctx, c, "tap-main", mainKey, "mcp__github__create_issue", `{"title":"Fix the build","labels":["ci"]}`)
	createApproval(t, ctx, c, "tap-child", child1, "sessions_send", `{"sessionKey":"agent:main:main","message":"done"}`)
	long, _ := json.Marshal(map[string]string{"sql": strings.Repeat("DROP TABLE users; ", 400)})
	createApproval(t, ctx, c, "tap-ops", groupKey, "mcp__db__query", string(long))

	a := sidecartest.Start(t, transcriptstore.SidecarConfig{DefaultNamespace: "default", Kubeconfig: kubeconfig})
	// The open session's transcript (empty) is read before its sends and runs are listed.
	if _, err := storeclient.NewClient(a.Internal).CreateSession(ctx, transcript.SessionHeader{Namespace: "default", SessionID: "s-main", SessionKey: mainKey, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	item := func(list, name string) string { return "#" + list + ` li[data-name="` + name + `"]` }
	run := signedIn(t, ctx, a.Public, token, chromedp.WaitVisible(item("approvals", "tap-ops"), chromedp.ByQuery))
	shot := func(name string) chromedp.ActionFunc { return chromiumtest.Shot(artifacts, name) }
	names := func(list string) []string {
		t.Helper()
		var out []string
		run("the names in "+list, chromedp.Evaluate(`[...document.querySelectorAll("#`+list+` > li")].map((li) => li.dataset.name).sort()`, &out))
		return out
	}
	if got := names("approvals"); strings.Join(got, ",") != "tap-child,tap-main,tap-ops" {
		t.Errorf("the namespace's list shows %v, want the three waiting calls", got)
	}
	var count, args, cut string
	run("read the list",
		chromedp.Text("#approvals-count", &count, chromedp.ByID),
		chromedp.Text(item("approvals", "tap-main")+" pre.args", &args, chromedp.ByQuery),
		chromedp.Text(item("approvals", "tap-ops")+" pre.args", &cut, chromedp.ByQuery),
	)
	if count != "3 tool calls waiting" {
		t.Errorf("count %q", count)
	}
	if want := "{\n  \"title\": \"Fix the build\",\n  \"labels\": [\n    \"ci\"\n  ]\n}"; args != want {
		t.Errorf("arguments shown as %q, want indented JSON %q", args, want)
	}
	if len(cut) > 4200 || !strings.HasSuffix(cut, "more characters (the transcript has the whole call)") {
		t.Errorf("long arguments shown in %d characters, ending %q; want them cut at 4096", len(cut), cut[max(0, len(cut)-80):])
	}

	// The open session lists its own call and its run's, not another session's.
	button := `#sessions tr[data-key="` + mainKey + `"] button`
	run("open the main session",
		chromedp.WaitVisible(button, chromedp.ByQuery),
		chromedp.Focus(button, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(item("session-approvals", "tap-child"), chromedp.ByQuery),
		shot("console-approvals.png"),
	)
	if got := names("session-approvals"); strings.Join(got, ",") != "tap-child,tap-main" {
		t.Errorf("the open session shows %v, want its own call and its run's", got)
	}

	// Approve by keyboard: the decision is a patch made as the signed-in person.
	run("approve tap-main",
		chromedp.Focus(item("session-approvals", "tap-main")+` button[aria-label="Approve tap-main"]`, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Enter),
	)
	decided(t, ctx, c, "tap-main", sessionsv1alpha1.DecisionApproved, "")
	// The pressed button is disabled now: the keyboard is left on the note saying what was sent.
	var onNote bool
	run("the focus after Approve",
		chromedp.WaitVisible(item("session-approvals", "tap-main")+" .sent", chromedp.ByQuery),
		chromedp.Evaluate(`document.activeElement.matches('#session-approvals li[data-name="tap-main"] .sent')`, &onNote))
	if !onNote {
		t.Error("after Approve the focus is not on the entry's note")
	}
	// Deny: without a reason nothing is sent and the reason box takes the focus; with one,
	// the decision carries it.
	var focused string
	run("deny tap-child without a reason",
		chromedp.Focus(`#session-approvals button[aria-label="Deny tap-child"]`, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Enter),
		chromedp.Evaluate(`document.activeElement.id`, &focused),
	)
	if focused != "session-approvals-reason-tap-child" {
		t.Errorf("focus on %q after Deny without a reason, want the reason box", focused)
	}
	var enabled bool
	run("deny tap-child", chromedp.KeyEvent("not now"), chromedp.KeyEvent(kb.Enter),
		// Decided in one list, it cannot be pressed again in the other.
		chromedp.WaitVisible(item("approvals", "tap-child")+`[data-decided="Denied"]`, chromedp.ByQuery),
		chromedp.Evaluate(`!document.querySelector('#approvals button[aria-label="Approve tap-child"]').disabled`, &enabled))
	if enabled {
		t.Error("tap-child's Approve in the namespace's list is still enabled after it was denied")
	}
	decided(t, ctx, c, "tap-child", sessionsv1alpha1.DecisionDenied, "not now")

	// The operator's status lands: decided and expired calls leave both lists live, and a
	// new call arrives live.
	setPhase(t, ctx, c, "tap-main", sessionsv1alpha1.ApprovalApproved)
	setPhase(t, ctx, c, "tap-ops", sessionsv1alpha1.ApprovalExpired)
	setPhase(t, ctx, c, "tap-child", sessionsv1alpha1.ApprovalDenied)
	createApproval(t, ctx, c, "tap-late", mainKey, "mcp__github__close_issue", `{"number":7}`)
	var inList bool
	run("the lists follow the events",
		chromedp.WaitNotPresent(item("approvals", "tap-main"), chromedp.ByQuery),
		chromedp.WaitNotPresent(item("session-approvals", "tap-main"), chromedp.ByQuery),
		chromedp.WaitNotPresent(item("approvals", "tap-ops"), chromedp.ByQuery),
		chromedp.WaitNotPresent(item("session-approvals", "tap-child"), chromedp.ByQuery),
		chromedp.WaitVisible(item("session-approvals", "tap-late"), chromedp.ByQuery),
		// The focused entry went away: the keyboard stays in the session's list, or, when
		// the events emptied it for a moment (its box hides), moves to the namespace's.
		chromedp.Evaluate(`(() => { const a = document.activeElement; return ["session-approvals-h", "approvals-h"].includes(a.id) || !!a.closest("#session-approvals, #approvals"); })()`, &inList),
	)
	if !inList {
		t.Error("the focus left the approvals when the focused entry was decided")
	}
	fitsNarrow(t, run, shot("console-approvals-narrow.png"))
}

// approverToken is the token of a person who reads sessions, sends and runs and decides
// ToolApprovals (the verb approve).
func approverToken(t *testing.T, ctx context.Context, cfg *rest.Config, name string) string {
	return tokenFor(t, ctx, cfg, name,
		rbacv1.PolicyRule{APIGroups: []string{sessionsv1alpha1.GroupVersion.Group}, Verbs: []string{"get", "list", "watch"},
			Resources: []string{"agentsessions", "agentsessions/transcript", "sessionsends", "subagentruns"}},
		rbacv1.PolicyRule{APIGroups: []string{sessionsv1alpha1.GroupVersion.Group}, Verbs: []string{"get", "list", "watch", "patch", sessionsv1alpha1.VerbApprove},
			Resources: []string{"toolapprovals"}})
}

// createApproval makes a ToolApproval waiting for a person, as the manager does: the object,
// then its Pending status.
func createApproval(t *testing.T, ctx context.Context, c client.Client, name, key, tool, args string) {
	t.Helper()
	ta := &sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: sessionsv1alpha1.ToolApprovalSpec{
		SessionKey: key, AgentID: "main", Tool: tool, Arguments: args,
		Owner:     sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: "send-" + name},
		ExpiresAt: metav1.NewTime(time.Now().Add(10 * time.Minute)),
	}}
	if err := c.Create(ctx, ta); err != nil {
		t.Fatal(err)
	}
	setPhase(t, ctx, c, name, sessionsv1alpha1.ApprovalPending)
}

func setPhase(t *testing.T, ctx context.Context, c client.Client, name string, phase sessionsv1alpha1.ApprovalPhase) {
	t.Helper()
	ta := &sessionsv1alpha1.ToolApproval{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, ta); err != nil {
		t.Fatal(err)
	}
	ta.Status.Phase = phase
	if err := c.Status().Update(ctx, ta); err != nil {
		t.Fatal(err)
	}
}

// decided waits until the approval holds the decision and reason the page made.
func decided(t *testing.T, ctx context.Context, c client.Client, name string, d sessionsv1alpha1.ApprovalDecision, reason string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Timeout)
	for {
		ta := &sessionsv1alpha1.ToolApproval{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, ta); err != nil {
			t.Fatal(err)
		}
		if ta.Spec.Decision == d && ta.Spec.Reason == reason {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: decision %q reason %q, want %q %q", name, ta.Spec.Decision, ta.Spec.Reason, d, reason)
		}
		time.Sleep(testenv.Interval)
	}
}

// TestConsoleBudgetApprovalsInChromium is a person deciding budgets in the console: a send
// at its budget (ToolApproval of kind Budget) shows what it asks, not a tool and arguments,
// whether listed at sign-in (approvals_list) or arriving live (an event's object), and is
// approved like a tool call.
func TestConsoleBudgetApprovalsInChromium(t *testing.T) {
	cfg, c, kubeconfig := startControlPlane(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	token := approverToken(t, ctx, cfg, "console-budget-approver")
	createSession(t, ctx, c, mainKey, "", sessionsv1alpha1.AgentSessionStatus{SessionID: "s-main"})
	const asks = "send s1 spent 1.00 of 1.00 USD; approve to allow 0.50 more"
	createBudgetApproval(t, ctx, c, "tap-budget", asks)
	a := sidecartest.Start(t, transcriptstore.SidecarConfig{DefaultNamespace: "default", Kubeconfig: kubeconfig})
	item := func(name string) string { return `#approvals li[data-name="` + name + `"]` }
	run := signedIn(t, ctx, a.Public, token, chromedp.WaitVisible(item("tap-budget"), chromedp.ByQuery))

	var what, shown string
	run("read the budget's entry",
		chromedp.Text(item("tap-budget")+" .what strong", &what, chromedp.ByQuery),
		chromedp.Text(item("tap-budget")+" pre.budget", &shown, chromedp.ByQuery))
	if what != "More budget" || shown != asks {
		t.Errorf("the budget's entry shows %q and %q, want %q and %q", what, shown, "More budget", asks)
	}
	const later = "run tree r1 spent 2000 of 2000 tokens; approve to allow 1000 more"
	createBudgetApproval(t, ctx, c, "tap-budget-late", later)
	run("a budget's ask arrives live",
		chromedp.WaitVisible(item("tap-budget-late"), chromedp.ByQuery),
		chromedp.Text(item("tap-budget-late")+" pre.budget", &shown, chromedp.ByQuery))
	if shown != later {
		t.Errorf("the live budget's entry shows %q, want %q", shown, later)
	}
	run("approve the budget",
		chromedp.Focus(item("tap-budget")+` button[aria-label="Approve tap-budget"]`, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Enter))
	decided(t, ctx, c, "tap-budget", sessionsv1alpha1.DecisionApproved, "")
	setPhase(t, ctx, c, "tap-budget", sessionsv1alpha1.ApprovalApproved)
	run("the decided budget leaves", chromedp.WaitNotPresent(item("tap-budget"), chromedp.ByQuery))
}

// createBudgetApproval makes a ToolApproval of kind Budget waiting for a person, as the
// manager does when a send reaches a budget whose SessionPolicy says onExceeded: Ask.
func createBudgetApproval(t *testing.T, ctx context.Context, c client.Client, name, message string) {
	t.Helper()
	ta := &sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: sessionsv1alpha1.ToolApprovalSpec{
		Kind: sessionsv1alpha1.ApprovalKindBudget, SessionKey: mainKey, AgentID: "main",
		Owner:     sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: "s1"},
		ExpiresAt: metav1.NewTime(time.Now().Add(10 * time.Minute)),
		Budget: &sessionsv1alpha1.BudgetApproval{BudgetOf: sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: "s1"},
			Resource: sessionsv1alpha1.BudgetCost, Spent: "1.00", Limit: "1.00", More: "0.50", Currency: "USD", Message: message},
	}}
	if err := c.Create(ctx, ta); err != nil {
		t.Fatal(err)
	}
	setPhase(t, ctx, c, name, sessionsv1alpha1.ApprovalPending)
}
