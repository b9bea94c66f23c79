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

// A session's row is updated in place by the event stream: the button a keyboard user is on
// stays the same element and keeps focus while other sessions, and its own, change and move.
func TestConsoleRowsKeepFocusWhileEventsChangeThem(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a := sidecartest.Start(t, transcriptstore.SidecarConfig{DefaultNamespace: "default", InsecureNoAuth: true})
	store := client.NewClient(a.Internal)
	say := func(id, key, text string) {
		t.Helper()
		if _, err := store.CreateSession(ctx, transcript.SessionHeader{Namespace: "default", SessionID: id, SessionKey: key, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		m := transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}
		if _, err := store.Append(ctx, "default", id, transcript.AppendRequest{Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	const focused, other = "agent:main:main", "agent:other:main"

	bctx, tcancel := context.WithTimeout(chromiumtest.Start(t, ctx), 90*time.Second)
	defer tcancel()
	button := `#sessions tbody tr[data-key="` + focused + `"] button`
	if err := chromedp.Run(bctx,
		chromedp.Navigate("http://"+a.Public+"/"),
		chromedp.WaitVisible("#signin"),
		chromedp.SendKeys("#token", "any-token", chromedp.ByID),
		chromedp.Focus("#namespace", chromedp.ByID),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible("#app"),
	); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	// Sessions whose first messages arrive after sign-in come in live.
	say("s1", focused, "one")
	say("s2", other, "one")
	if err := chromedp.Run(bctx,
		chromedp.WaitVisible(`#sessions tbody tr[data-key="`+other+`"]`),
		chromedp.WaitVisible(button),
		chromedp.Focus(button, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('`+button+`').dataset.mark = "kept"`, nil),
	); err != nil {
		t.Fatalf("sign in and focus: %v", err)
	}
	same := `document.activeElement && document.activeElement.dataset.mark === "kept" && document.activeElement.textContent === "` + focused + `"`
	for i, key := range []string{other, focused, other} {
		id := map[string]string{focused: "s1", other: "s2"}[key]
		m := transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "more"}}}
		if _, err := store.Append(ctx, "default", id, transcript.AppendRequest{Message: m}); err != nil {
			t.Fatal(err)
		}
		// The row shows the new count (and is first, the newest), then focus is checked.
		first := `#sessions tbody tr:first-child[data-key="` + key + `"] td[data-label="messages"]`
		var count string
		if err := chromedp.Run(bctx, chromedp.WaitVisible(first), chromedp.Text(first, &count)); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		var kept bool
		if err := chromedp.Run(bctx, chromedp.Evaluate(same, &kept)); err != nil {
			t.Fatal(err)
		}
		if !kept {
			t.Fatalf("after a change of %s (%s messages) the focused button was replaced or lost focus", key, count)
		}
	}
}
