package server_test

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
	"github.com/agent-sessions/agent-session-operator/internal/transcript/server"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/server/sidecartest"
)

// The sidecar serves the console at / and publishes every store commit on /events: an append through the internal API
// reaches an /events subscriber as session.message and then sessions.changed "message".
func TestSidecarPublishesAppendsOnEvents(t *testing.T) {
	ctx := context.Background()
	a := sidecartest.Start(t, server.SidecarConfig{DefaultNamespace: "ns", InsecureNoAuth: true})
	page, err := http.Get("http://" + a.Public + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = page.Body.Close()
	if page.StatusCode != http.StatusOK || page.Header.Get("Content-Security-Policy") != console.CSP {
		t.Fatalf("console at /: %d, CSP %q", page.StatusCode, page.Header.Get("Content-Security-Policy"))
	}
	resp, err := http.Get("http://" + a.Public + "/events?namespace=ns")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	c := client.NewClient(a.Internal)
	hdr := transcript.SessionHeader{Namespace: "ns", SessionID: "s1", SessionKey: "agent:a:main", CreatedAt: time.Now()}
	if _, err := c.CreateSession(ctx, hdr); err != nil {
		t.Fatal(err)
	}
	msg := transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: "text", Text: "hello"}}}
	if _, err := c.Append(ctx, "ns", "s1", transcript.AppendRequest{Message: msg}); err != nil {
		t.Fatal(err)
	}
	r := sse.NewReader(resp.Body)
	ev, err := r.Next()
	if err != nil || ev.Event != events.KindSessionMessage {
		t.Fatalf("first event %s %s (%v), want session.message", ev.Event, ev.Data, err)
	}
	ev, err = r.Next()
	var change events.SessionChange
	if err != nil || ev.Event != events.KindSessionsChanged || json.Unmarshal(ev.Data, &change) != nil ||
		change.Phase != events.PhaseMessage || change.Stats.MessageCount != 1 || change.Stats.LastPreview != "hello" {
		t.Fatalf("second event %s %s (%v), want sessions.changed of phase message", ev.Event, ev.Data, err)
	}
}
