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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/console/chromiumtest"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	storeclient "github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecartest"
)

// The keys of the overview's sessions: a main session whose run spawned a child, whose run
// spawned a grandchild, whose run spawned a great-grandchild; a group and a cron job beside.
const (
	mainKey  = "agent:main:main"
	groupKey = "agent:main:discord:group:ops"
	cronKey  = "cron:nightly-digest"
	child1   = "agent:main:subagent:11111111-1111-4111-8111-111111111111"
	child2   = "agent:main:subagent:22222222-2222-4222-8222-222222222222"
	child3   = "agent:main:subagent:33333333-3333-4333-8333-333333333333"
)

// TestConsoleOverviewInChromium is the console as a new user first sees it: a real API
// server (envtest) holds sessions with counters and a run tree, the real transcript-store
// sidecar serves them over TLS to a ServiceAccount's token, and real Chromium shows them.
func TestConsoleOverviewInChromium(t *testing.T) {
	artifacts, _ := filepath.Abs("artifacts")
	cfg, c, kubeconfig := startControlPlane(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	token := viewerToken(t, ctx, cfg)

	updated := time.Now().Add(-3 * time.Minute).Truncate(time.Second)
	mainUsage := &sessionsv1alpha1.Usage{InputTokens: 1200, OutputTokens: 340, Cost: "0.012300000", Currency: "USD"}
	for _, s := range []struct {
		key, label string
		status     sessionsv1alpha1.AgentSessionStatus
	}{
		{mainKey, "front desk", sessionsv1alpha1.AgentSessionStatus{SessionID: "s-main", MessageCount: 2, LastMessagePreview: "pong",
			UpdatedAt: &metav1.Time{Time: updated}, InputTokens: 1200, OutputTokens: 340, Usage: mainUsage}},
		{groupKey, "", sessionsv1alpha1.AgentSessionStatus{SessionID: "s-ops", MessageCount: 7, LastMessagePreview: "deploy done"}},
		{cronKey, "", sessionsv1alpha1.AgentSessionStatus{SessionID: "s-cron"}},
		{child1, "research", sessionsv1alpha1.AgentSessionStatus{SessionID: "s-c1", MessageCount: 4}},
		{child2, "deep dive", sessionsv1alpha1.AgentSessionStatus{SessionID: "s-c2", MessageCount: 3}},
		{child3, "fact check", sessionsv1alpha1.AgentSessionStatus{SessionID: "s-c3", MessageCount: 2}},
	} {
		createSession(t, ctx, c, s.key, s.label, s.status)
	}
	createRun(t, ctx, c, "research", mainKey, child1, sessionsv1alpha1.RunSucceeded, &sessionsv1alpha1.Usage{InputTokens: 900, OutputTokens: 200, Cost: "0.004000000", Currency: "USD"})
	createRun(t, ctx, c, "deep-dive", child1, child2, sessionsv1alpha1.RunSucceeded, nil)
	createRun(t, ctx, c, "fact-check", child2, child3, sessionsv1alpha1.RunRunning, nil)

	a := sidecartest.Start(t, transcriptstore.SidecarConfig{DefaultNamespace: "default", Kubeconfig: kubeconfig})
	store := storeclient.NewClient(a.Internal)
	if _, err := store.CreateSession(ctx, transcript.SessionHeader{Namespace: "default", SessionID: "s-main", SessionKey: mainKey, CreatedAt: updated}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ role, text string }{{transcript.RoleUser, "ping"}, {transcript.RoleAssistant, "pong"}} {
		if _, err := store.Append(ctx, "default", "s-main", transcript.AppendRequest{Message: transcript.Message{
			Role: m.role, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: m.text}}}}); err != nil {
			t.Fatal(err)
		}
	}

	run := signedIn(t, ctx, a.Public, token, chromedp.WaitVisible(`//table[@id="sessions"]//button[normalize-space()="`+child3+`"]`, chromedp.BySearch))
	shot := func(name string) chromedp.ActionFunc { return chromiumtest.Shot(artifacts, name) }
	row := func(key string) string { return `#sessions tr[data-key="` + key + `"]` }

	// The first list carries the counters: no event has come since sign-in. The row is read
	// by its column labels, as a person reads a stacked row.
	var cells map[string]string
	run("the main session's row", chromedp.Evaluate(`(() => {
		const tr = [...document.querySelectorAll("#sessions tbody tr")].find((r) => r.querySelector("button").textContent === "`+mainKey+`");
		const out = Object.fromEntries([...tr.cells].map((td) => [td.dataset.label || "key", td.textContent]));
		const t = tr.querySelector("time");
		out.title = t ? t.title : "";
		return out;
	})()`, &cells), shot("console-sessions.png"))
	if cells["messages"] != "2" || cells["last"] != "pong" {
		t.Errorf("Messages %q, Last message %q; want 2 and pong from the first list", cells["messages"], cells["last"])
	}
	if cells["cost"] != "0.0123 USD" {
		t.Errorf("Cost %q, want 0.0123 USD", cells["cost"])
	}
	if !regexp.MustCompile(`^\d+m ago$`).MatchString(cells["updated"]) {
		t.Errorf("Updated shows %q, want minutes ago", cells["updated"])
	}
	if want := updated.UTC().Format("2006-01-02T15:04:05.000Z"); cells["title"] != want {
		t.Errorf("Updated's title %q, want the full time %q", cells["title"], want)
	}

	// Filters: by kind, by the subagent marker, by text in a label.
	visible := func(what string, set ...chromedp.Action) []string {
		t.Helper()
		var keys []string
		run(what, append(set, chromedp.Evaluate(
			`[...document.querySelectorAll("#sessions tbody tr")].map((tr) => tr.dataset.key)`, &keys))...)
		return keys
	}
	// set changes a filter as a person's choice does: the value, then its event.
	set := func(id, value, event string) chromedp.Action {
		return chromedp.Evaluate(`(() => { const s = document.getElementById("`+id+`"); s.value = "`+value+
			`"; s.dispatchEvent(new Event("`+event+`")); })()`, nil)
	}
	kind := func(k string) chromedp.Action { return set("filter-kind", k, "change") }
	if got := visible("kind group", kind("group")); strings.Join(got, ",") != groupKey {
		t.Errorf("kind group shows %v, want only %s", got, groupKey)
	}
	if got := visible("kind subagent", kind("subagent")); len(got) != 3 || !strings.Contains(strings.Join(got, ","), child1) {
		t.Errorf("kind subagent shows %v, want the three children", got)
	}
	if got := visible("text research", kind(""), chromedp.SendKeys("#filter-text", "RESEARCH", chromedp.ByID), shot("console-filtered.png")); strings.Join(got, ",") != child1 {
		t.Errorf("text research shows %v, want only %s (its label)", got, child1)
	}
	if got := visible("no filter", set("filter-text", "", "input")); len(got) != 6 {
		t.Errorf("without a filter the list shows %v, want all six", got)
	}

	// The open session shows its usage and cost, and its run tree, three levels deep.
	button := row(mainKey) + " button"
	tree := `#work li[data-name="research"] ul.children li[data-name="deep-dive"] ul.children li[data-name="fact-check"]`
	var usage string
	run("open the main session",
		chromedp.Focus(button, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`#transcript li[data-seq="2"]`, chromedp.ByQuery),
		chromedp.WaitVisible(tree, chromedp.ByQuery),
		chromedp.Text("#usage", &usage, chromedp.ByID),
		shot("console-session-open.png"),
	)
	for _, want := range []string{"1,200 input", "340 output", "cost 0.0123 USD"} {
		if !strings.Contains(usage, want) {
			t.Errorf("usage %q lacks %q", usage, want)
		}
	}
	// A run spawned deep in the tree after opening joins it live.
	createRun(t, ctx, c, "fact-check-2", child2, "", sessionsv1alpha1.RunRunning, nil)
	run("a new grandchild run arrives live",
		chromedp.WaitVisible(`#work li[data-name="deep-dive"] ul.children li[data-name="fact-check-2"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#work details").forEach((d) => d.open = true)`, nil),
		shot("console-run-tree.png"),
	)
	var summary string
	run("the research run's summary", chromedp.Text(`#work li[data-name="research"] > details > summary`, &summary, chromedp.ByQuery))
	if !strings.Contains(summary, "cost 0.004 USD") {
		t.Errorf("run summary %q lacks its cost", summary)
	}
	// On a narrow screen the filters, the stacked rows and the nested tree still fit.
	fitsNarrow(t, run, shot("console-run-tree-narrow.png"))
}

// fitsNarrow checks that the page does not scroll sideways at 360 px, and takes shot there.
func fitsNarrow(t *testing.T, run runner, shot chromedp.Action) {
	t.Helper()
	var overflow bool
	run("narrow",
		chromedp.EmulateViewport(360, 740),
		chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth`, &overflow),
		shot,
	)
	if overflow {
		t.Error("the page scrolls sideways at 360 px")
	}
}

// runner runs browser actions for one step of a test, failing it with what the step was.
type runner func(what string, actions ...chromedp.Action)

// signedIn starts Chromium, signs in to the sidecar at addr with token (namespace default)
// by keyboard, and waits for ready; the runner drives the page from there.
func signedIn(t *testing.T, ctx context.Context, addr, token string, ready chromedp.Action) runner {
	t.Helper()
	bctx := chromiumtest.Start(t, ctx, chromedp.Flag("ignore-certificate-errors", true))
	if err := chromedp.Run(bctx); err != nil { // the browser lives as long as bctx
		t.Fatal(err)
	}
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		rctx, rcancel := context.WithTimeout(bctx, testenv.Timeout)
		defer rcancel()
		if err := chromedp.Run(rctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("sign in",
		chromedp.Navigate("https://"+addr+"/"),
		chromedp.WaitVisible("#signin"),
		chromedp.SendKeys("#token", token, chromedp.ByID),
		chromedp.Focus("#namespace", chromedp.ByID),
		chromedp.KeyEvent(kb.Enter),
		ready,
	)
	return run
}

// startControlPlane starts a real API server (envtest) for the test: its config, a client
// and a kubeconfig file the sidecar reads.
func startControlPlane(t *testing.T) (*rest.Config, client.Client, string) {
	t.Helper()
	testenv.RequireControlPlane(t)
	ctrllog.SetLogger(logr.Discard())
	env := testenv.New()
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, c, kubeconfig
}

// viewerToken is a token of a ServiceAccount that may read sessions, sends, runs and
// transcripts in the namespace, as a console user's RBAC would allow, and nothing else.
func viewerToken(t *testing.T, ctx context.Context, cfg *rest.Config) string {
	t.Helper()
	return tokenFor(t, ctx, cfg, "console-viewer", rbacv1.PolicyRule{
		APIGroups: []string{sessionsv1alpha1.GroupVersion.Group}, Verbs: []string{"get", "list", "watch"},
		Resources: []string{"agentsessions", "agentsessions/transcript", "sessionsends", "subagentruns"},
	})
}

// tokenFor is a token of a ServiceAccount name in default whose Role holds rules.
func tokenFor(t *testing.T, ctx context.Context, cfg *rest.Config, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

func createSession(t *testing.T, ctx context.Context, c client.Client, key, label string, st sessionsv1alpha1.AgentSessionStatus) {
	t.Helper()
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: sessionkey.ObjectName(key)},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main", Label: label}}
	if err := c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	st.Phase = sessionsv1alpha1.SessionActive
	s.Status = st
	if err := c.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
}

func createRun(t *testing.T, ctx context.Context, c client.Client, name, requester, child string, phase sessionsv1alpha1.RunPhase, usage *sessionsv1alpha1.Usage) {
	t.Helper()
	r := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "main", Task: name + " for the console test", RequesterSessionKey: requester}}
	if err := c.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	started := metav1.NewTime(time.Now().Add(-time.Minute))
	r.Status = sessionsv1alpha1.SubagentRunStatus{Status: "accepted", ChildSessionKey: child, Phase: phase, Usage: usage, OwnerStatus: sessionsv1alpha1.OwnerStatus{StartedAt: &started}}
	if phase == sessionsv1alpha1.RunSucceeded {
		r.Status.CompletedAt = &started
	}
	if err := c.Status().Update(ctx, r); err != nil {
		t.Fatal(err)
	}
}
