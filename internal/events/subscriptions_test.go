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
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// subscribe POSTs a subscriptions change for a stream as token; it returns the status and
// the followed sessions.
func (f *fixture) subscribe(t *testing.T, token, id, body string) (int, []string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/events/"+id+"/subscriptions", bytes.NewBufferString(body))
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out SubscriptionsResponse
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.StreamID != id {
			t.Fatalf("response %+v (%v)", out, err)
		}
	}
	return resp.StatusCode, out.Sessions
}

// The specification's sessions.messages.subscribe / unsubscribe on an open stream: a
// namespace stream of sessions.changed alone gets one session's transcript events once its
// owner subscribes to it, and none after it unsubscribes; the stream goes on.
func TestSubscribeAddsTranscriptEventsToANamespaceStream(t *testing.T) {
	f := newFixture(t)
	f.g.set("alice", "", true)
	s, _ := f.open(t, "alice", "namespace=ns&kinds=sessions.changed", "")
	if !s.info.Whole || !slices.Equal(s.info.Kinds, []string{KindSessionsChanged}) || s.info.Subscriptions != "/events/"+s.info.StreamID+"/subscriptions" {
		t.Fatalf("stream info %+v", s.info)
	}
	f.waitSubscribed(t)
	f.publish(KindSessionMessage, mine, `{"n":0}`) // not asked for yet
	// A kind the stream has from the start, after it: once it arrives, {"n":0} has been passed
	// over, and the subscription below cannot race it.
	f.publish(KindSessionsChanged, theirs, `{"n":"barrier"}`)
	if got := s.next(t); string(got.Data) != `{"n":"barrier"}` {
		t.Fatalf("got %s %s before subscribing, want only the barrier", got.Event, got.Data)
	}
	if code, got := f.subscribe(t, "alice", s.info.StreamID, `{"subscribe":["`+mineID+`"]}`); code != http.StatusOK || !slices.Equal(got, []string{mine}) {
		t.Fatalf("subscribe: %d %v", code, got)
	}
	f.publish(KindSessionMessage, theirs, `{"n":1}`)
	f.publish(KindSessionMessage, mine, `{"n":2}`)
	f.publish(KindSessionDelta, mine, `{"n":3}`)
	f.publish(KindSessionsChanged, theirs, `{"n":4}`)
	for _, want := range []string{`{"n":2}`, `{"n":3}`, `{"n":4}`} {
		if got := s.next(t); string(got.Data) != want {
			t.Fatalf("got %s %s, want %s", got.Event, got.Data, want)
		}
	}
	if code, got := f.subscribe(t, "alice", s.info.StreamID, `{"unsubscribe":["`+mine+`"]}`); code != http.StatusOK || len(got) != 0 {
		t.Fatalf("unsubscribe: %d %v", code, got)
	}
	f.publish(KindSessionMessage, mine, `{"n":5}`)
	f.publish(KindSessionsChanged, mine, `{"n":6}`)
	if got := s.next(t); string(got.Data) != `{"n":6}` {
		t.Fatalf("after unsubscribe got %s %s, want the sessions.changed alone", got.Event, got.Data)
	}
}

// A stream of sessions gains and loses followed sessions, each judged by the access layer as
// session= is; another caller's stream id is 404, as is one that ended.
func TestSubscriptionsAreTheOwnersAndJudged(t *testing.T) {
	f := newFixture(t)
	f.g.set("bob", sessionkey.ObjectName(mine), true)
	f.g.set("bob", sessionkey.ObjectName(third), true)
	f.g.set("eve", "", true)
	s, _ := f.open(t, "bob", "namespace=ns&session="+mine, "")
	id := s.info.StreamID
	if s.info.Whole || !slices.Equal(s.info.Sessions, []string{mine}) {
		t.Fatalf("stream info %+v", s.info)
	}
	f.waitSubscribed(t)
	if code, _ := f.subscribe(t, "bob", id, `{"subscribe":["`+theirs+`"]}`); code != http.StatusForbidden {
		t.Errorf("a session bob may not read: %d, want 403", code)
	}
	if code, _ := f.subscribe(t, "eve", id, `{"subscribe":["`+theirs+`"]}`); code != http.StatusNotFound {
		t.Errorf("another caller's stream: %d, want 404", code)
	}
	if code, _ := f.subscribe(t, "bob", "0123456789abcdef0123456789abcdef", `{"subscribe":["`+third+`"]}`); code != http.StatusNotFound {
		t.Errorf("an unknown stream: %d, want 404", code)
	}
	if code, _ := f.subscribe(t, "bob", id, `{"subscribe":[""]}`); code != http.StatusBadRequest {
		t.Errorf("an empty session: %d, want 400", code)
	}
	if code, _ := f.subscribe(t, "bob", id, `{"subscribe":["`+third+`"],"extra":1}`); code != http.StatusBadRequest {
		t.Errorf("an unknown field: %d, want 400", code)
	}
	if code, got := f.subscribe(t, "bob", id, `{"subscribe":["`+third+`"],"unsubscribe":["`+mine+`"]}`); code != http.StatusOK || !slices.Equal(got, []string{third}) {
		t.Fatalf("subscribe third, unsubscribe mine: %d %v", code, got)
	}
	f.publish(KindSessionMessage, mine, `{"n":1}`)
	f.publish(KindSessionsChanged, third, `{"n":2}`)
	if got := s.next(t); string(got.Data) != `{"n":2}` {
		t.Fatalf("got %s %s, want third's event alone", got.Event, got.Data)
	}
	// The stream ends; its id then names nothing.
	_ = s.resp.Body.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if code, _ := f.subscribe(t, "bob", id, `{"subscribe":["`+mine+`"]}`); code == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("an ended stream's id still answers")
		}
	}
}

// An unknown sessionId in a subscribe is 404 not_found, told only to a caller with access.
func TestSubscribeUnknownSession(t *testing.T) {
	f := newFixture(t)
	f.g.set("carol", "", true)
	s, _ := f.open(t, "carol", "namespace=ns", "")
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/events/"+s.info.StreamID+"/subscriptions",
		bytes.NewBufferString(`{"subscribe":["7c9e6679-7425-40de-944b-e07fc1f90ae7"]}`))
	wantNotFound(t, "carol", req)
}
