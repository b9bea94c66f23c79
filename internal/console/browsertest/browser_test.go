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

// Package browsertest drives the console in real headless Chromium (Debian's chromium,
// installed with apt-get when missing and the test runs as root) against a real
// transcript-store sidecar. Screenshots go to artifacts/ beside this file (git-ignored).
package browsertest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/agent-sessions/agent-session-operator/internal/console/chromiumtest"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecartest"
)

func TestConsoleInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	artifacts, _ := filepath.Abs("artifacts")

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a := sidecartest.Start(t, transcriptstore.SidecarConfig{DefaultNamespace: "default", InsecureNoAuth: true})
	store := client.NewClient(a.Internal)
	const key = "agent:main:main"
	if _, err := store.CreateSession(ctx, transcript.SessionHeader{Namespace: "default", SessionID: "s1", SessionKey: key, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	say := func(role, text string, from string) {
		t.Helper()
		m := transcript.Message{Role: role, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}
		if from != "" {
			m.Provenance = &transcript.Provenance{SourceSessionKey: from}
		}
		if _, err := store.Append(ctx, "default", "s1", transcript.AppendRequest{Message: m}); err != nil {
			t.Fatal(err)
		}
	}

	bctx, tcancel := context.WithTimeout(chromiumtest.Start(t, ctx), 90*time.Second)
	defer tcancel()
	shot := func(name string) chromedp.ActionFunc { return chromiumtest.Shot(artifacts, name) }

	// Sign in by keyboard only: Tab to the token, type it, Tab to the namespace (default),
	// Enter submits.
	if err := chromedp.Run(bctx,
		chromedp.Navigate("http://"+a.Public+"/"),
		chromedp.WaitVisible("#signin"),
		chromedp.KeyEvent(kb.Tab),
		chromedp.KeyEvent("any-token"),
		chromedp.KeyEvent(kb.Tab),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible("#app"),
		chromedp.WaitNotVisible("#signin"),
	); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	// A message appended after sign-in brings the session into the list live.
	say(transcript.RoleUser, "hello from kubectl", "")
	if err := chromedp.Run(bctx, chromedp.WaitVisible("#sessions tbody button")); err != nil {
		t.Fatalf("session row: %v", err)
	}
	// Open it by keyboard: the session is a button; Enter on it opens the transcript.
	if err := chromedp.Run(bctx,
		chromedp.Focus("#sessions tbody button", chromedp.ByQuery),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`#transcript li[data-seq="1"]`),
	); err != nil {
		t.Fatalf("open session: %v", err)
	}
	// A message sent into the open session appears live within a second.
	start := time.Now()
	say(transcript.RoleUser, "ping from another session", "agent:other:main")
	wctx, wcancel := context.WithTimeout(bctx, 10*time.Second)
	err := chromedp.Run(wctx, chromedp.WaitVisible(`#transcript li[data-seq="2"] .from`))
	wcancel()
	if err != nil {
		t.Fatalf("live message: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the message took %v to appear, want under a second", d)
	}
	var from string
	if err := chromedp.Run(bctx, chromedp.Text(`#transcript li[data-seq="2"] .from`, &from), shot("console-transcript.png")); err != nil {
		t.Fatal(err)
	}
	if from != "from agent:other:main " && from != "from agent:other:main" {
		t.Errorf("provenance shown as %q", from)
	}
	// A SessionHook's delivery says which hook and delivery sent it.
	hookMsg := transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "a CI event"}},
		Provenance: &transcript.Provenance{Kind: transcript.ProvenanceHook, Hook: "ci", DeliveryID: "msg_1"}}
	if _, err := store.Append(ctx, "default", "s1", transcript.AppendRequest{Message: hookMsg}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(bctx, chromedp.WaitVisible(`#transcript li[data-seq="3"] .from`), chromedp.Text(`#transcript li[data-seq="3"] .from`, &from)); err != nil {
		t.Fatalf("hook message: %v", err)
	}
	if strings.TrimSpace(from) != "from hook ci (delivery msg_1)" {
		t.Errorf("hook provenance shown as %q", from)
	}
	searchAndOpen(t, bctx, key, shot)
	// A compaction record shows as a folded summary marker with its range.
	summary := transcript.Message{Role: transcript.RoleCompaction, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "we said hello"}},
		Compaction: &transcript.Compaction{FromSeq: 1, ToSeq: 2, TokensBefore: 900, TokensAfter: 100}}
	if _, err := store.Append(ctx, "default", "s1", transcript.AppendRequest{Message: summary}); err != nil {
		t.Fatal(err)
	}
	var marker string
	var open bool
	wctx, wcancel = context.WithTimeout(bctx, 10*time.Second)
	err = chromedp.Run(wctx, chromedp.WaitVisible(`#transcript li[data-seq="4"] details.compaction summary`),
		chromedp.Text(`#transcript li[data-seq="4"] details.compaction summary`, &marker),
		chromedp.Evaluate(`document.querySelector('#transcript li[data-seq="4"] details.compaction').open`, &open))
	wcancel()
	if err != nil {
		t.Fatalf("compaction marker: %v", err)
	}
	if marker != "compacted messages 1–2 (900 → 100 tokens)" || open {
		t.Errorf("compaction marker %q (open %v), want it folded with its range", marker, open)
	}
	// A reply is written live as the model streams it, then replaced by its stored record.
	live := store.LiveReply("default", "s1", "uid/round-1", 1)
	live.Write("Once upon")
	live.Flush()
	var writing string
	if err := chromedp.Run(bctx, chromedp.WaitVisible(`#transcript li.live`), chromedp.Text(`#transcript li.live`, &writing)); err != nil {
		t.Fatalf("live reply: %v", err)
	}
	if !strings.Contains(writing, "Once upon") {
		t.Errorf("the reply being written shows %q", writing)
	}
	say(transcript.RoleAssistant, "Once upon a time.", "")
	if err := chromedp.Run(bctx, chromedp.WaitVisible(`#transcript li[data-seq="5"]`), chromedp.WaitNotPresent(`#transcript li.live`)); err != nil {
		t.Fatalf("stored reply: %v", err)
	}
	// A narrow screen: the table becomes one block per session, nothing overflows.
	var overflow bool
	if err := chromedp.Run(bctx,
		chromedp.EmulateViewport(360, 740),
		chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth`, &overflow),
		shot("console-narrow.png"),
	); err != nil {
		t.Fatal(err)
	}
	if overflow {
		t.Error("the page scrolls sideways at 360 px")
	}
}

// searchAndOpen: the search box finds the session's first message (the index takes it in
// the background: ask again until it has it) and its hit opens the session at that message.
func searchAndOpen(t *testing.T, bctx context.Context, key string, shot func(string) chromedp.ActionFunc) {
	t.Helper()
	if err := chromedp.Run(bctx, chromedp.SendKeys("#search-q", "kubectl")); err != nil {
		t.Fatal(err)
	}
	for try := 0; ; try++ {
		sctx, scancel := context.WithTimeout(bctx, time.Second)
		err := chromedp.Run(sctx, chromedp.Click("#search button"), chromedp.WaitVisible("#hits li button"))
		scancel()
		if err == nil {
			break
		}
		if try == 20 {
			t.Fatalf("search hit: %v", err)
		}
	}
	var hit string
	if err := chromedp.Run(bctx, chromedp.Text("#hits li", &hit), chromedp.Click("#hits li button"),
		chromedp.WaitVisible(`#transcript li[data-seq="1"]`), shot("console-search.png")); err != nil {
		t.Fatalf("open the hit: %v", err)
	}
	if !strings.Contains(hit, key+" #1") || !strings.Contains(hit, "hello from kubectl") {
		t.Errorf("hit shown as %q", hit)
	}
}
