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
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// grants is an Authorizer whose token is its user and whose grants change under a test: a
// user reads the session names listed for it ("*" = every name), and it records the names
// asked about.
type grants struct {
	mu    sync.Mutex
	names map[string][]string
	asked []string
}

func (g *grants) Authorize(_ context.Context, token, namespace, name string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, name)
	for _, n := range g.names[token] {
		if n == "*" || n == name {
			return token, nil
		}
	}
	return "", fmt.Errorf("%w: %s may not read %s/%s", transcriptstore.ErrForbidden, token, namespace, name)
}

func (g *grants) set(user string, names ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.names[user] = names
}

const reauth = time.Hour

func accessFixture(t *testing.T, g *grants, maxStreams int) *historyFixture {
	t.Helper()
	f := &historyFixture{store: transcripttest.OpenStore(t, t.TempDir()), clock: clocktesting.NewFakeClock(time.Now())}
	transcripttest.CreateSession(t, f.store, "s1", "agent:a:main")
	transcripttest.AppendN(t, f.store, "s1", 3, false)
	f.srv = httptest.NewServer(transcriptstore.NewHistoryHandler(transcriptstore.HistoryOptions{
		Source: f.store, Authorizer: g, DefaultNamespace: transcripttest.Namespace,
		KeepAlive: time.Minute, ReauthInterval: reauth, MaxStreamsPerUser: maxStreams, Clock: f.clock,
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func newGrants() *grants { return &grants{names: map[string][]string{}} }

// The access check names the session; a user granted one session reads it and gets 403,
// not 404, for a key that does not exist, so it cannot probe for keys.
func TestHistoryAccessNamesTheSession(t *testing.T) {
	g := newGrants()
	f := accessFixture(t, g, 0)
	g.set("bob", sessionkey.ObjectName("agent:a:main"))
	if resp := f.get(t, "GET", mainPath, "bob"); resp.StatusCode != http.StatusOK {
		t.Fatalf("granted session: status %d", resp.StatusCode)
	}
	if resp := f.get(t, "GET", "/sessions/agent:a:other/history", "bob"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("unknown session, not granted: status %d, want 403", resp.StatusCode)
	}
	g.set("carol", "*")
	if resp := f.get(t, "GET", "/sessions/agent:a:other/history", "carol"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session, namespace-wide grant: status %d, want 404", resp.StatusCode)
	}
	if g.asked[0] != sessionkey.ObjectName("agent:a:main") {
		t.Fatalf("asked about %q, want the session's object name", g.asked[0])
	}
}

// A stream is authorized again every ReauthInterval and ended when access is gone.
func TestHistoryStreamEndsWhenAccessIsRevoked(t *testing.T) {
	g := newGrants()
	f := accessFixture(t, g, 0)
	g.set("bob", "*")
	resp := f.get(t, "GET", mainPath+"?follow=1", "bob")
	defer resp.Body.Close()
	s := &sseReader{r: bufio.NewReader(resp.Body)}
	for ev := s.next(t); ev.event != "history"; {
		ev = s.next(t)
	}
	f.clock.Step(reauth) // still allowed: the stream goes on
	g.set("bob")
	f.clock.Step(reauth)
	for {
		ev := s.next(t)
		if ev.event == "" {
			continue // keepalives
		}
		if ev.event != "end" || ev.data != `{"reason":"forbidden"}` {
			t.Fatalf("got %+v, want the stream ended as forbidden", ev)
		}
		return
	}
}

// One user holds at most MaxStreamsPerUser streams; others are not affected.
func TestHistoryStreamsPerUserAreCapped(t *testing.T) {
	g := newGrants()
	f := accessFixture(t, g, 2)
	g.set("bob", "*")
	g.set("carol", "*")
	for range 2 {
		resp := f.get(t, "GET", mainPath+"?follow=1", "bob")
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream within the cap: status %d", resp.StatusCode)
		}
	}
	if resp := f.get(t, "GET", mainPath+"?follow=1", "bob"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third stream: status %d, want 429", resp.StatusCode)
	}
	resp := f.get(t, "GET", mainPath+"?follow=1", "carol")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("another user's stream: status %d", resp.StatusCode)
	}
}
