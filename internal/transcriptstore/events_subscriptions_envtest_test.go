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
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// openStream opens GET /events?namespace=ns&query as token and reads its first event, the
// stream's id; stop ends the stream. A refused stream returns its status alone.
func (f *doorFixture) openStream(token, ns, query string) (events.StreamInfo, *sse.Reader, func(), int) {
	f.t.Helper()
	ctx, stop := context.WithCancel(f.t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.base+"/events?namespace="+ns+"&"+query, nil)
	f.must(err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := f.hc.Do(req)
	f.must(err)
	end := func() { stop(); _ = resp.Body.Close() }
	if resp.StatusCode != http.StatusOK {
		end()
		return events.StreamInfo{}, nil, func() {}, resp.StatusCode
	}
	r := sse.NewReader(resp.Body)
	var info events.StreamInfo
	if ev, err := r.Next(); err != nil || ev.Event != events.KindStream || json.Unmarshal(ev.Data, &info) != nil {
		end()
		f.t.Fatalf("first event %s %s (%v), want the stream's id", ev.Event, ev.Data, err)
	}
	return info, r, end, resp.StatusCode
}

// subscriptions POSTs a change of stream id's subscriptions as token in ns.
func (f *doorFixture) subscriptions(token, ns, id string, body events.SubscriptionsRequest) answer {
	return f.do(http.MethodPost, "/events/"+url.PathEscape(id)+"/subscriptions?namespace="+ns, token, body)
}

// subscribeRow is the door matrix's row of /events/: the caller opens a stream of
// sessions.changed and subscribes it to session A's transcript.
func subscribeRow(f *doorFixture, token, ns string) (bool, string) {
	info, _, stop, code := f.openStream(token, ns, "kinds=sessions.changed")
	defer stop()
	if code != http.StatusOK {
		return false, "open: " + http.StatusText(code)
	}
	a := f.subscriptions(token, ns, info.StreamID, events.SubscriptionsRequest{Subscribe: []string{keyA}})
	return a.status == http.StatusOK, http.StatusText(a.status) + " " + a.text
}

// sessions.messages.subscribe on the real store: a namespace stream of sessions.changed
// gains session A's transcript once its owner subscribes, through the access layer (a
// session it may not read is 403) and only for its owner (another caller's POST is 404).
func TestEventsSubscriptionsOnTheRealStore(t *testing.T) {
	f := startDoors(t)
	rules := rulesFor([]caller.Right{caller.ReadTranscript}) // session A's transcript alone
	f.grant("sub-alice", rules)
	f.grant("sub-eve", rules)
	alice, eve := f.token("sub-alice", audience), f.token("sub-eve", audience)
	f.eventually("alice reads A", func() (bool, string) {
		a := f.history(alice, doorNS, keyA)
		return a.status == http.StatusOK, a.text
	})

	// A namespace stream is admitted on a session the store's informer has seen; the history
	// read above does not wait for it, so under load the first open can still be a 403.
	var (
		info events.StreamInfo
		r    *sse.Reader
		stop = func() {}
	)
	f.eventually("alice opens a namespace stream", func() (bool, string) {
		var code int
		if info, r, stop, code = f.openStream(alice, doorNS, "kinds=sessions.changed"); code != http.StatusOK {
			return false, "open: " + http.StatusText(code)
		}
		return true, ""
	})
	defer func() { stop() }()
	if !info.Whole || len(info.Kinds) != 1 || info.Subscriptions != "/events/"+info.StreamID+"/subscriptions" {
		t.Fatalf("stream info %+v", info)
	}
	if a := f.subscriptions(alice, doorNS, info.StreamID, events.SubscriptionsRequest{Subscribe: []string{keyB}}); a.status != http.StatusForbidden {
		t.Errorf("subscribe to B, which alice may not read: %d %s, want 403", a.status, a.text)
	}
	if a := f.subscriptions(eve, doorNS, info.StreamID, events.SubscriptionsRequest{Subscribe: []string{keyA}}); a.status != http.StatusNotFound {
		t.Errorf("eve changes alice's stream: %d %s, want 404", a.status, a.text)
	}
	if a := f.subscriptions(alice, otherNS, info.StreamID, events.SubscriptionsRequest{Subscribe: []string{keyA}}); a.status != http.StatusNotFound {
		t.Errorf("the stream named in another namespace: %d %s, want 404", a.status, a.text)
	}
	a := f.subscriptions(alice, doorNS, info.StreamID, events.SubscriptionsRequest{Subscribe: []string{"sid-" + sessionkey.ObjectName(keyA)}})
	if a.status != http.StatusOK || !strings.Contains(a.text, `"sessions":["`+keyA+`"]`) {
		t.Fatalf("subscribe to A by its sessionId: %d %s", a.status, a.text)
	}

	_, err := f.store.Append(t.Context(), doorNS, "sid-"+sessionkey.ObjectName(keyA), transcript.AppendRequest{Message: transcript.Message{
		Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "now followed"}}}})
	f.must(err)
	got := make(chan sse.Event, 64)
	go func() {
		defer close(got)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			got <- ev
		}
	}()
	deadline := time.After(time.Minute)
	for seen := false; !seen; {
		select {
		case ev, ok := <-got:
			if !ok {
				t.Fatal("the stream ended before A's message")
			}
			if ev.Event == events.KindSessionMessage {
				if !strings.Contains(string(ev.Data), "now followed") || !strings.Contains(string(ev.Data), keyA) {
					t.Fatalf("session.message %s, want A's new message", ev.Data)
				}
				seen = true
			}
		case <-deadline:
			t.Fatal("no session.message of A after the subscribe")
		}
	}
}
