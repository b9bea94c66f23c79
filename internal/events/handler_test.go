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

package events

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	errNoToken   = errors.New("unauthenticated")
	errForbidden = errors.New("forbidden")
)

// grants is a toy authorizer: token -> readable session names ("" for the namespace).
type grants struct {
	mu sync.Mutex
	m  map[string]map[string]bool
}

func (g *grants) set(token, name string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m[token] == nil {
		g.m[token] = map[string]bool{}
	}
	g.m[token][name] = ok
}

func (g *grants) access(r *http.Request) Access {
	token := r.Header.Get("Authorization")
	return Access{
		Check: func(_ context.Context, _, name string) error {
			g.mu.Lock()
			defer g.mu.Unlock()
			names, ok := g.m[token]
			switch {
			case !ok:
				return errNoToken
			case names[name] || names[""]:
				return nil
			}
			return errForbidden
		},
		Fatal: func(err error) bool { return errors.Is(err, errNoToken) },
	}
}

type fixture struct {
	hub   *Hub
	clock *clocktesting.FakeClock
	g     *grants
	srv   *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{hub: NewHub(64, "t"), clock: clocktesting.NewFakeClock(time.Now()), g: &grants{m: map[string]map[string]bool{}}}
	f.srv = httptest.NewServer(NewHandler(Options{
		Hub: f.hub, DefaultNamespace: "ns", Access: f.g.access, Clock: f.clock, Resolve: resolveIDs,
		Refuse: func(w http.ResponseWriter, err error) {
			code := http.StatusForbidden
			if errors.Is(err, errNoToken) {
				code = http.StatusUnauthorized
			}
			http.Error(w, err.Error(), code)
		},
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) publish(kind, key, data string) {
	f.hub.Publish(Event{Kind: kind, Namespace: "ns", SessionKey: key, Name: sessionkey.ObjectName(key), Data: []byte(data)})
}

type stream struct {
	resp *http.Response
	r    *sse.Reader
	// info is the stream's first event.
	info StreamInfo
}

func (f *fixture) open(t *testing.T, token, query, lastID string) (*stream, int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/events?"+query, nil)
	req.Header.Set("Authorization", token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, resp.StatusCode
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	s := &stream{resp: resp, r: sse.NewReader(resp.Body)}
	// Every stream begins with its id.
	if first := s.next(t); first.Event != KindStream || json.Unmarshal(first.Data, &s.info) != nil || s.info.StreamID == "" {
		t.Fatalf("first event %s %s, want the stream's id", first.Event, first.Data)
	}
	return s, resp.StatusCode
}

func (s *stream) next(t *testing.T) sse.Event {
	t.Helper()
	ev, err := s.r.Next()
	if err != nil {
		t.Fatalf("next event: %v", err)
	}
	return ev
}

// waitSubscribed returns once a subscriber is attached, so a publish reaches it.
func (f *fixture) waitSubscribed(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		f.hub.mu.Lock()
		got := len(f.hub.subs)
		f.hub.mu.Unlock()
		if got >= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no subscriber attached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const (
	mine   = "agent:a:main"
	theirs = "agent:b:main"
	third  = "agent:c:main"
	mineID = "0b6f9a3e-1111-4222-8333-444455556666"
)

// resolveIDs knows one session by its sessionId, as the store's Resolve does.
func resolveIDs(namespace, ref string) (Followed, bool) {
	if namespace == "ns" && (ref == mineID || ref == mine) {
		return Followed{Key: mine, Name: sessionkey.ObjectName(mine)}, true
	}
	return Followed{}, false
}

func TestASubscriberSeesItsSessionsInOrderAndNothingOfOthers(t *testing.T) {
	f := newFixture(t)
	f.g.set("alice", sessionkey.ObjectName(mine), true)
	s, code := f.open(t, "alice", "namespace=ns", "")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	f.waitSubscribed(t)
	f.publish(KindSessionsChanged, theirs, `{"phase":"created"}`)
	f.publish(KindSessionsChanged, mine, `{"phase":"created"}`)
	f.publish(KindSessionMessage, theirs, `{"text":"secret"}`)
	f.publish(KindSessionMessage, mine, `{"text":"hi"}`)
	f.publish(KindRunsChanged, mine, `{}`) // not asked for
	f.publish(KindSessionsChanged, mine, `{"phase":"archived"}`)
	for _, want := range []sse.Event{
		{Event: KindSessionsChanged, Data: []byte(`{"phase":"created"}`)},
		{Event: KindSessionMessage, Data: []byte(`{"text":"hi"}`)},
		{Event: KindSessionsChanged, Data: []byte(`{"phase":"archived"}`)},
	} {
		if got := s.next(t); got.Event != want.Event || string(got.Data) != string(want.Data) {
			t.Fatalf("got %s %s, want %s %s", got.Event, got.Data, want.Event, want.Data)
		}
	}
}

func TestResumeAfterADroppedConnectionLosesNothing(t *testing.T) {
	f := newFixture(t)
	f.g.set("alice", "", true)
	s, _ := f.open(t, "alice", "namespace=ns", "")
	f.waitSubscribed(t)
	f.publish(KindSessionMessage, mine, `{"n":1}`)
	if got := s.next(t); string(got.Data) != `{"n":1}` {
		t.Fatalf("first event %s", got.Data)
	}
	_ = s.resp.Body.Close()
	// Published while the client was away.
	f.publish(KindSessionMessage, mine, `{"n":2}`)
	f.publish(KindSessionMessage, theirs, `{"n":3}`)
	s2, _ := f.open(t, "alice", "namespace=ns", f.hub.FormatID(1))
	f.waitSubscribed(t)
	f.publish(KindSessionMessage, mine, `{"n":4}`)
	for _, want := range []string{`{"n":2}`, `{"n":3}`, `{"n":4}`} {
		if got := s2.next(t); string(got.Data) != want {
			t.Fatalf("got %s, want %s", got.Data, want)
		}
	}
	// A gap older than the log asks the client to reload.
	s3, _ := f.open(t, "alice", "namespace=ns", "other-epoch-1")
	if got := s3.next(t); got.Event != KindReset {
		t.Fatalf("got %s, want reset", got.Event)
	}
}

func TestAccessIsCheckedAndRevocationEndsTheStream(t *testing.T) {
	f := newFixture(t)
	if _, code := f.open(t, "nobody", "namespace=ns", ""); code != http.StatusUnauthorized {
		t.Fatalf("unknown token: status %d, want 401", code)
	}
	f.g.set("bob", sessionkey.ObjectName(mine), true)
	if _, code := f.open(t, "bob", "namespace=ns&session="+theirs, ""); code != http.StatusForbidden {
		t.Fatalf("a session bob may not read: status %d, want 403", code)
	}
	s, code := f.open(t, "bob", "namespace=ns&session="+mine, "")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	f.waitSubscribed(t)
	f.publish(KindSessionMessage, mine, `{"n":1}`)
	if got := s.next(t); string(got.Data) != `{"n":1}` {
		t.Fatalf("got %s", got.Data)
	}
	f.g.set("bob", sessionkey.ObjectName(mine), false)
	// The decision holds until the recheck; then the stream ends.
	f.clock.Step(2 * time.Minute)
	for {
		got := s.next(t)
		if got.Event == "end" {
			break
		}
		if got.Event == KindSessionMessage {
			t.Fatalf("event after revocation: %s", got.Data)
		}
	}
}

// One stream follows several sessions, each named by its key or by its sessionId
// (session= repeated, the spec's per-key sessions.messages.subscribe), and nothing else.
func TestAStreamFollowsSessionsByKeyAndBySessionID(t *testing.T) {
	f := newFixture(t)
	f.g.set("alice", sessionkey.ObjectName(mine), true)
	f.g.set("alice", sessionkey.ObjectName(third), true)
	s, code := f.open(t, "alice", "namespace=ns&session="+mineID+"&session="+third, "")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	f.waitSubscribed(t)
	f.publish(KindSessionMessage, theirs, `{"n":0}`)
	f.publish(KindSessionMessage, mine, `{"n":1}`)
	f.publish(KindSessionMessage, third, `{"n":2}`)
	f.publish(KindSessionMessage, theirs, `{"n":3}`)
	f.publish(KindSessionsChanged, mine, `{"n":4}`)
	for _, want := range []string{`{"n":1}`, `{"n":2}`, `{"n":4}`} {
		if got := s.next(t); string(got.Data) != want {
			t.Fatalf("got %s %s, want %s", got.Event, got.Data, want)
		}
	}
}

// wantNotFound makes req as token and wants a 404 not_found.
func wantNotFound(t *testing.T, token string, req *http.Request) {
	t.Helper()
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body transcript.ErrorBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusNotFound || body.Error.Type != transcript.ErrTypeNotFound {
		t.Fatalf("%s %s: status %d, body %+v (%v); want 404 not_found", req.Method, req.URL, resp.StatusCode, body, err)
	}
}

// Every followed session must be readable; an unknown sessionId is a 404 not_found, told
// only to a caller that may read the session the ref would name.
func TestFollowingRefusesUnreadableAndUnknownSessions(t *testing.T) {
	f := newFixture(t)
	f.g.set("bob", sessionkey.ObjectName(mine), true)
	if _, code := f.open(t, "bob", "namespace=ns&session="+mine+"&session="+theirs, ""); code != http.StatusForbidden {
		t.Fatalf("one unreadable session of two: status %d, want 403", code)
	}
	const unknownID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	if _, code := f.open(t, "bob", "namespace=ns&session="+unknownID, ""); code != http.StatusForbidden {
		t.Fatalf("unknown sessionId, no access: status %d, want 403", code)
	}
	f.g.set("carol", "", true)
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/events?namespace=ns&session="+unknownID, nil)
	wantNotFound(t, "carol", req)
	if _, code := f.open(t, "carol", "namespace=ns&session=", ""); code != http.StatusBadRequest {
		t.Fatalf("empty session: status %d, want 400", code)
	}
}
