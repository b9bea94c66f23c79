package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/console"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/server"
	"github.com/go-logr/logr"
)

// The sidecar serves the console at / and publishes every store commit on /events: an append through the internal API
// reaches an /events subscriber as session.message and then sessions.changed "message".
func TestSidecarPublishesAppendsOnEvents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	type addrs struct{ internal, public string }
	ready := make(chan addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.RunSidecar(ctx, server.SidecarConfig{
			DataDir: t.TempDir(), Socket: filepath.Join(t.TempDir(), "s.sock"), Listen: "127.0.0.1:0",
			DefaultNamespace: "ns", InsecureNoAuth: true, Log: logr.Discard(),
			Ready: func(s, l string) { ready <- addrs{s, l} },
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	var a addrs
	select {
	case a = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	page, err := http.Get("http://" + a.public + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = page.Body.Close()
	if page.StatusCode != http.StatusOK || page.Header.Get("Content-Security-Policy") != console.CSP {
		t.Fatalf("console at /: %d, CSP %q", page.StatusCode, page.Header.Get("Content-Security-Policy"))
	}
	resp, err := http.Get("http://" + a.public + "/events?namespace=ns")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	c := client.NewClient(a.internal)
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
