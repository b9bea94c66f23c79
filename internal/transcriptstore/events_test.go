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

package transcriptstore_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/console"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecartest"
)

// The sidecar serves the console at / and publishes every store commit on /events: an append through the internal API
// reaches an /events subscriber as session.message and then sessions.changed "message",
// and a subscriber following the session by its sessionId.
func TestSidecarPublishesAppendsOnEvents(t *testing.T) {
	ctx := context.Background()
	a := sidecartest.Start(t, transcriptstore.SidecarConfig{DefaultNamespace: "ns", InsecureNoAuth: true})
	page, err := http.Get("http://" + a.Public + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = page.Body.Close()
	if page.StatusCode != http.StatusOK || page.Header.Get("Content-Security-Policy") != console.CSP {
		t.Fatalf("console at /: %d, CSP %q", page.StatusCode, page.Header.Get("Content-Security-Policy"))
	}
	get := func(query string, want int) *http.Response {
		resp, err := http.Get("http://" + a.Public + "/events?" + query)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		if resp.StatusCode != want {
			t.Fatalf("%s: status %d, want %d", query, resp.StatusCode, want)
		}
		return resp
	}
	resp := get("namespace=ns", http.StatusOK)
	c := client.NewClient(a.Internal)
	hdr := transcript.SessionHeader{Namespace: "ns", SessionID: "s1", SessionKey: "agent:a:main", CreatedAt: time.Now()}
	if _, err := c.CreateSession(ctx, hdr); err != nil {
		t.Fatal(err)
	}
	// A stream of two sessions, one named by its sessionId (resolved by the store), one by
	// a key no session has yet; a sessionId no session has is 404 not_found.
	followed := get("namespace=ns&session=s1&session=agent:b:main&kinds=session.message", http.StatusOK)
	get("namespace=ns&session=no-such-id", http.StatusNotFound)
	msg := transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: "text", Text: "hello"}}}
	if _, err := c.Append(ctx, "ns", "s1", transcript.AppendRequest{Message: msg}); err != nil {
		t.Fatal(err)
	}
	r := sse.NewReader(resp.Body)
	ev, err := r.Next()
	if err != nil || ev.Event != events.KindStream {
		t.Fatalf("first event %s %s (%v), want the stream's id", ev.Event, ev.Data, err)
	}
	ev, err = r.Next()
	if err != nil || ev.Event != events.KindSessionMessage {
		t.Fatalf("first event %s %s (%v), want session.message", ev.Event, ev.Data, err)
	}
	ev, err = r.Next()
	var change events.SessionChange
	if err != nil || ev.Event != events.KindSessionsChanged || json.Unmarshal(ev.Data, &change) != nil ||
		change.Phase != events.PhaseMessage || change.Stats.MessageCount != 1 || change.Stats.LastPreview != "hello" {
		t.Fatalf("second event %s %s (%v), want sessions.changed of phase message", ev.Event, ev.Data, err)
	}
	fr := sse.NewReader(followed.Body)
	if ev, err = fr.Next(); err != nil || ev.Event != events.KindStream {
		t.Fatalf("followed stream's first event %s (%v), want the stream's id", ev.Event, err)
	}
	ev, err = fr.Next()
	var m events.SessionMessage
	if err != nil || ev.Event != events.KindSessionMessage || json.Unmarshal(ev.Data, &m) != nil || m.SessionID != "s1" || m.SessionKey != "agent:a:main" {
		t.Fatalf("followed stream: %s %s (%v), want the message of s1", ev.Event, ev.Data, err)
	}
}
