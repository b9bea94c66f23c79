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
	"net/url"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func publishN(h *Hub, n int) {
	for range n {
		h.Publish(Event{Kind: KindSessionMessage, Namespace: "ns", SessionKey: "agent:a:main"})
	}
}

func TestSubscribeResumesFromTheLog(t *testing.T) {
	for _, tc := range []struct {
		name      string
		published int
		lastID    string
		wantFirst int64
		wantLen   int
		wantReset bool
	}{
		{"live only", 5, "", 0, 0, false},
		{"resume mid log", 5, "e1-2", 3, 3, false},
		{"resume at the end", 5, "e1-5", 0, 0, false},
		{"resume from the start", 4, "e1-0", 1, 4, false},
		{"gap older than the log", 10, "e1-2", 0, 0, true},
		{"last kept id still resumes", 10, "e1-6", 7, 4, false},
		{"id of another epoch", 5, "e0-2", 0, 0, true},
		{"id from the future", 5, "e1-9", 0, 0, true},
		{"garbage id", 5, "nonsense", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHub(4, "e1")
			publishN(h, tc.published)
			s := h.Subscribe(tc.lastID)
			defer s.Close()
			if s.Reset != tc.wantReset || len(s.Backlog) != tc.wantLen {
				t.Fatalf("reset %v backlog %v; want reset %v and %d events", s.Reset, s.Backlog, tc.wantReset, tc.wantLen)
			}
			for i, e := range s.Backlog {
				if e.ID != tc.wantFirst+int64(i) {
					t.Fatalf("backlog[%d] = %v, want id %d", i, e, tc.wantFirst+int64(i))
				}
			}
			h.Publish(Event{Kind: KindSessionMessage})
			if e := <-s.C; e.ID != int64(tc.published+1) {
				t.Fatalf("live event %v, want id %d", e, tc.published+1)
			}
		})
	}
}

func TestASlowSubscriberIsCutOffNotWaitedFor(t *testing.T) {
	h := NewHub(0, "e")
	slow, fast := h.Subscribe(""), h.Subscribe("")
	defer fast.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range fast.C {
		}
	}()
	publishN(h, subBuffer+1)
	n := 0
	for range slow.C {
		n++
	}
	if !slow.Lagged() || n != subBuffer {
		t.Fatalf("slow subscriber: lagged %v after %d events; want cut off after %d", slow.Lagged(), n, subBuffer)
	}
	fast.Close()
	<-done
	// It resumes from the log with the last id it saw.
	again := h.Subscribe(h.FormatID(int64(n)))
	defer again.Close()
	if again.Reset || len(again.Backlog) != 1 || again.Backlog[0].ID != int64(subBuffer+1) {
		t.Fatalf("resume after cut-off: reset %v backlog %v", again.Reset, again.Backlog)
	}
}

func TestFilter(t *testing.T) {
	msg := Event{Kind: KindSessionMessage, Namespace: "ns", SessionKey: "agent:a:main"}
	run := Event{Kind: KindRunsChanged, Namespace: "ns", SessionKey: "agent:a:main"}
	other := Event{Kind: KindSessionMessage, Namespace: "ns", SessionKey: "agent:b:main"}
	elsewhere := Event{Kind: KindSessionMessage, Namespace: "other", SessionKey: "agent:a:main"}
	for _, tc := range []struct {
		query   string
		match   []Event
		noMatch []Event
		err     bool
	}{
		{query: "namespace=ns", match: []Event{msg, other}, noMatch: []Event{run, elsewhere}},
		{query: "", match: []Event{msg}, noMatch: []Event{elsewhere}},
		{query: "namespace=ns&session=agent:a:main", match: []Event{msg}, noMatch: []Event{other, run}},
		{query: "namespace=ns&kinds=runs.changed", match: []Event{run}, noMatch: []Event{msg}},
		{query: "namespace=ns&kinds=runs.changed,session.message", match: []Event{run, msg}},
		{query: "namespace=ns&kinds=bogus", err: true},
	} {
		q, _ := url.ParseQuery(tc.query)
		f, err := ParseFilter(q, "ns")
		if (err != nil) != tc.err {
			t.Fatalf("%q: err %v", tc.query, err)
		}
		for _, e := range tc.match {
			if !f.Match(e) {
				t.Errorf("%q does not match %v", tc.query, e)
			}
		}
		for _, e := range tc.noMatch {
			if f.Match(e) {
				t.Errorf("%q matches %v", tc.query, e)
			}
		}
	}
}

// Reply pieces reach the subscribers of the moment without an ID, stay out of the resume
// log, and are missed rather than cutting off a subscriber that is behind.
func TestDeltasAreLiveOnly(t *testing.T) {
	h := NewHub(4, "e1")
	slow := h.Subscribe("")
	defer slow.Close()
	hdr := transcript.SessionHeader{Namespace: "ns", SessionKey: "agent:a:main", SessionID: "s1"}
	for range subBuffer + 10 {
		h.PublishDelta(hdr, transcript.Delta{RunID: "r", Step: 1, Seq: 1, Text: "x"})
	}
	if slow.Lagged() {
		t.Fatal("a subscriber behind on pieces was cut off")
	}
	if got := len(slow.C); got != subBuffer {
		t.Fatalf("%d pieces waiting, want the buffer's %d", got, subBuffer)
	}
	if e := <-slow.C; e.ID != 0 || e.Kind != KindSessionDelta || e.Name != objectName(hdr.SessionKey) {
		t.Fatalf("piece %v id %d name %q, want no id and the session's object name", e, e.ID, e.Name)
	}
	if late := h.Subscribe("e1-0"); len(late.Backlog) != 0 || late.Reset {
		t.Fatalf("resume log holds %v (reset %v), want nothing", late.Backlog, late.Reset)
	}
}
