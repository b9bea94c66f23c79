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

package client_test

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// The sidecar dies after it stored an append but before it answered: the client retries on
// the broken connection and the idempotency key returns the stored record, not a second one.
func TestClientRetriesABrokenConnection(t *testing.T) {
	st := transcripttest.OpenStore(t, t.TempDir())
	transcripttest.CreateSession(t, st, "s1", "agent:a:main")
	api := transcriptstore.NewAPIHandler(st, nil, nil)
	var broken atomic.Int32
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages") && broken.Add(1) == 1 {
			api.ServeHTTP(discard{header: http.Header{}}, r) // stored and fsynced...
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			_ = conn.Close() // ...and never answered
			return
		}
		api.ServeHTTP(w, r)
	})
	sock := filepath.Join(t.TempDir(), "t.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	recs, err := client.NewClient(sock).Append(context.Background(), transcripttest.Namespace, "s1", transcript.AppendRequest{IdempotencyKey: "turn-1/0", Message: transcripttest.TextMessage(transcript.RoleUser, "hello")})
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if len(recs) != 1 || recs[0].Seq != 1 {
		t.Fatalf("records = %+v, want the one stored record with seq 1", recs)
	}
	if n := broken.Load(); n != 2 {
		t.Errorf("append requests = %d, want 2 (one broken, one retried)", n)
	}
	page, err := st.Read(context.Background(), transcripttest.Namespace, "s1", transcript.ReadOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Messages) != 1 {
		t.Errorf("transcript holds %d messages, want 1", len(page.Messages))
	}
}

// discard is a ResponseWriter whose answer is lost with the connection.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}
