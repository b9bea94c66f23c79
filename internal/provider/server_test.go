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

package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// stubServer answers its i-th request with handlers[i] (the last one
// repeats) and keeps every request it received.
type stubServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	path   string
	header http.Header
	body   any
}

func newStub(t *testing.T, handlers ...http.HandlerFunc) *stubServer {
	t.Helper()
	s := &stubServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body any
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, recorded{path: r.URL.Path, header: r.Header.Clone(), body: body})
		s.mu.Unlock()
		handlers[min(n, len(handlers)-1)](w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *stubServer) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// reply answers with status, body and header pairs.
func reply(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// sseStream streams events, flushing after each so the client sees real chunks.
func sseStream(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range events {
			_, _ = io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}
}

// hangUp closes the connection without answering, like a reset.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(fmt.Sprintf("hijack: %v", err))
	}
	_ = conn.Close()
}

// stall answers nothing until the client gives up.
func stall(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// autoStep fires every timer armed on fc, so retry backoff takes no real time.
func autoStep(t *testing.T, fc *clocktesting.FakeClock) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
			}
			if fc.HasWaiters() {
				fc.Step(retryAfterCap)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	t.Cleanup(func() { close(done); <-stopped })
}

func newTestClock() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

// mustNew builds a provider talking to srv with a fake clock.
func mustNew(t *testing.T, name string, srv *stubServer, fc *clocktesting.FakeClock, mutate ...func(*Config)) Provider {
	t.Helper()
	base := srv.URL
	if name == OpenAI {
		base += "/v1"
	}
	// No attempt or idle bound by default: autoStep would cut every attempt off at once.
	cfg := Config{Provider: name, Model: "test-model", BaseURL: base, APIKey: "sk-test", HTTPClient: srv.Client(), Clock: fc, AttemptTimeout: -1, IdleTimeout: -1}
	for _, m := range mutate {
		m(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// streamCase is one streamed answer and what the client must make of it.
type streamCase struct {
	events       []string
	want         *Response
	wantErr      *Error
	wantRequests int
}

// runStreamCases plays each case's events to a streaming provider allowed
// one retry, and checks the answer and the request body it sent.
func runStreamCases(t *testing.T, provider string, cases map[string]streamCase, req Request, wantBody string) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := newStub(t, sseStream(tc.events...))
			fc := newTestClock()
			autoStep(t, fc)
			p := mustNew(t, provider, srv, fc, func(c *Config) { c.Stream, c.MaxRetries = true, 1 })
			got, err := p.Complete(context.Background(), req)
			if tc.wantErr != nil {
				checkError(t, provider, err, tc.wantErr)
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			reqs := srv.requests()
			if len(reqs) != tc.wantRequests {
				t.Fatalf("server saw %d requests, want %d", len(reqs), tc.wantRequests)
			}
			if diff := cmp.Diff(decodeJSON(t, wantBody), reqs[0].body); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
		})
	}
}
