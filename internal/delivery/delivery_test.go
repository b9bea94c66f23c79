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

package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"
)

// sink answers with the scripted statuses in turn and records what it received.
type sink struct {
	mu       sync.Mutex
	statuses []int
	got      []*http.Request
	bodies   []Message
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var m Message
	_ = json.NewDecoder(r.Body).Decode(&m)
	s.got = append(s.got, r)
	s.bodies = append(s.bodies, m)
	code := http.StatusOK
	if len(s.statuses) > 0 {
		code, s.statuses = s.statuses[0], s.statuses[1:]
	}
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "0")
	}
	w.WriteHeader(code)
	_, _ = w.Write([]byte("answer"))
}

func TestDeliver(t *testing.T) {
	cases := map[string]struct {
		statuses     []int
		wantAttempts int
		wantErr      string
	}{
		"delivered at once":           {wantAttempts: 1},
		"500 then delivered":          {statuses: []int{500}, wantAttempts: 2},
		"429 honours Retry-After":     {statuses: []int{429, 429}, wantAttempts: 3},
		"400 is final":                {statuses: []int{400}, wantAttempts: 1, wantErr: "delivery failed: sink answered 400: Bad Request"},
		"retries are bounded":         {statuses: []int{503, 503, 503, 503, 503}, wantAttempts: 4, wantErr: "4 attempts"},
		"401 is final, not retried":   {statuses: []int{401, 200}, wantAttempts: 1, wantErr: "401"},
		"502 then 429 then delivered": {statuses: []int{502, 429}, wantAttempts: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &sink{statuses: tc.statuses}
			srv := httptest.NewServer(s)
			defer srv.Close()
			d := &Deliverer{HTTP: srv.Client(), Attempts: 4, Backoff: time.Millisecond, MaxWait: time.Millisecond, Clock: clock.RealClock{}}
			msg := Message{Namespace: "ns", SessionKey: "agent:main:main", Channel: "webchat", Text: "hi", IdempotencyKey: "uid/announce"}
			err := d.Deliver(context.Background(), Sink{URL: srv.URL, Token: "secret"}, msg)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Deliver: %v", err)
			}
			if tc.wantErr != "" {
				var de *Error
				if !errors.As(err, &de) || !contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want a delivery error with %q", err, tc.wantErr)
				}
			}
			if len(s.got) != tc.wantAttempts {
				t.Fatalf("attempts = %d, want %d", len(s.got), tc.wantAttempts)
			}
			for i, r := range s.got {
				if r.Header.Get("Idempotency-Key") != "uid/announce" || r.Header.Get("Authorization") != "Bearer secret" {
					t.Errorf("attempt %d headers: %v", i, r.Header)
				}
				if diff := cmp.Diff(msg, s.bodies[i]); diff != "" {
					t.Errorf("attempt %d body (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestDeliverConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	d := &Deliverer{HTTP: http.DefaultClient, Attempts: 2, Backoff: time.Millisecond, MaxWait: time.Millisecond, Clock: clock.RealClock{}}
	err := d.Deliver(context.Background(), Sink{URL: url}, Message{IdempotencyKey: "k"})
	if err == nil || !contains(err.Error(), "2 attempts") {
		t.Fatalf("err = %v, want a bounded retry failure", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// A key this process delivered is not posted again (an announce repeated after a failed
// status write); a failed key is, and the memory is bounded.
func TestDeliverRemembersDeliveredKeys(t *testing.T) {
	s := &sink{statuses: []int{400}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	d := &Deliverer{HTTP: srv.Client(), Attempts: 1, Backoff: time.Millisecond, MaxWait: time.Millisecond, Clock: clock.RealClock{}}
	deliver := func(key string) error {
		return d.Deliver(context.Background(), Sink{URL: srv.URL}, Message{Namespace: "ns", Text: "hi", IdempotencyKey: key})
	}
	if err := deliver("a"); err == nil {
		t.Fatal("the sink's 400 was not reported")
	}
	for range 2 {
		if err := deliver("a"); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.got) != 2 {
		t.Errorf("posts = %d, want 2 (the failed one and one delivery)", len(s.got))
	}
	for i := range recentCapacity {
		d.sent.add(fmt.Sprint(i))
	}
	if d.sent.has("a") || !d.sent.has(fmt.Sprint(recentCapacity-1)) || d.sent.lru().Len() != recentCapacity {
		t.Errorf("the oldest key is not forgotten first: has(a)=%v, size %d", d.sent.has("a"), d.sent.lru().Len())
	}
}
