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
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// Issue 30: /events refuses, before the stream opens, a caller who may read no session of
// the namespace; a caller granted one session by name gets the namespace stream; and the
// sessions asked about are bounded, however many the namespace holds.
func TestNamespaceEventsOpenOnlyForACallerWhoReadsSomething(t *testing.T) {
	b := fake.NewClientBuilder().WithScheme(scheme.New())
	for i := range 150 {
		key := fmt.Sprintf("agent:a:s%d", i)
		b = b.WithObjects(&sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: sessionkey.ObjectName(key)},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "a"}})
	}
	g := newGrants()
	g.set("one", sessionkey.ObjectName("agent:a:s1"))
	g.set("none")
	srv := httptest.NewServer(transcriptstore.NewEventsHandler(events.NewHub(0, "t"), g, nil, b.Build(), "ns", logr.Discard()))
	t.Cleanup(srv.Close)
	open := func(token string) int {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?namespace=ns", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if got := open("one"); got != http.StatusOK {
		t.Errorf("a caller granted one session: %d, want 200", got)
	}
	g.asked = nil
	if got := open("none"); got != http.StatusForbidden {
		t.Errorf("a caller granted nothing: %d, want 403 before the stream", got)
	}
	if n := len(g.asked); n > 101 {
		t.Errorf("asked about %d sessions for one refused stream, want at most the namespace and 100", n)
	}
}
