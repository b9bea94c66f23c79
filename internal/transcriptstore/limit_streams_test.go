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
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
)

// One user holds at most max event streams; another user, and the first once a stream
// ends, are not affected; a token no one owns reaches the handler, which refuses it.
func TestLimitStreamsPerUser(t *testing.T) {
	entered, release := make(chan string), make(chan struct{})
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.Header.Get("Authorization")
		if token == "Bearer nobody" {
			http.Error(w, "who?", http.StatusUnauthorized)
			return
		}
		entered <- token
		<-release
	})
	identify := func(_ context.Context, token string) (string, error) {
		if token == "nobody" {
			return "", errors.New("unknown token")
		}
		return token, nil
	}
	h := transcriptstore.LimitStreams(inner, identify, userlimits.NewStreams(1))
	get := func(token string) chan int {
		code := make(chan int, 1)
		go func() {
			req := httptest.NewRequest(http.MethodGet, "/events", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			code <- rec.Code
		}()
		return code
	}

	alice := get("alice")
	<-entered
	if code := <-get("alice"); code != http.StatusTooManyRequests {
		t.Fatalf("alice's second stream: %d, want 429", code)
	}
	if code := <-get("nobody"); code != http.StatusUnauthorized {
		t.Fatalf("an unknown token: %d, want the handler's 401", code)
	}
	bob := get("bob")
	<-entered // bob's stream is open beside alice's

	release <- struct{}{} // one of the two streams ends
	release <- struct{}{} // and the other
	for _, c := range []chan int{alice, bob} {
		if code := <-c; code != http.StatusOK {
			t.Fatalf("a stream within the bound answered %d", code)
		}
	}
	again := get("alice") // her slot is free again
	if who := <-entered; who != "Bearer alice" {
		t.Fatalf("entered %q, want alice", who)
	}
	release <- struct{}{}
	if code := <-again; code != http.StatusOK {
		t.Fatalf("alice after her stream ended: %d", code)
	}
}
