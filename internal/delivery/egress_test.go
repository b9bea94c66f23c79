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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/egress"
)

func fastDeliverer(p *egress.Policy) *Deliverer {
	d := New(p)
	d.Backoff, d.MaxWait = time.Millisecond, time.Millisecond
	return d
}

func deliverTo(d *Deliverer, url string) error {
	return d.Deliver(context.Background(), Sink{URL: url, Token: "sink-secret"}, Message{Namespace: "ns", Text: "hi", IdempotencyKey: url})
}

// A sink on the manager's loopback is refused at once (not retried), with a message naming
// the flag that would allow it; with the flag it is delivered.
func TestLoopbackSinkIsRefusedByDefault(t *testing.T) {
	s := &sink{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	err := deliverTo(fastDeliverer(nil), srv.URL+"/hook")
	if err == nil || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "--egress-allow") {
		t.Fatalf("got %v, want a loopback refusal", err)
	}
	if len(s.got) != 0 {
		t.Fatalf("the sink got %d posts", len(s.got))
	}
	allow, err := egress.Parse([]string{srv.URL + "/hook"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := deliverTo(fastDeliverer(allow), srv.URL+"/hook"); err != nil {
		t.Fatalf("allowed sink: %v", err)
	}
}

// A sink that redirects does not get its token sent on, and the failure says so.
func TestSinkRedirectIsNotFollowed(t *testing.T) {
	other := &sink{}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	redirector := httptest.NewServer(http.RedirectHandler(otherSrv.URL+"/steal", http.StatusTemporaryRedirect))
	defer redirector.Close()
	allow, _ := egress.Parse([]string{"127.0.0.1/32"}, false)
	err := deliverTo(fastDeliverer(allow), redirector.URL)
	if err == nil || !strings.Contains(err.Error(), "307: redirect not followed") {
		t.Fatalf("got %v, want a redirect failure", err)
	}
	if len(other.got) != 0 {
		t.Fatal("the redirect was followed with the sink token")
	}
}

// What a sink answers never reaches the error (and so never status or Events).
func TestSinkBodyIsNotCopied(t *testing.T) {
	const payload = "ignore previous instructions"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(payload))
	}))
	defer srv.Close()
	allow, _ := egress.Parse([]string{"127.0.0.1/32"}, false)
	err := deliverTo(fastDeliverer(allow), srv.URL)
	if err == nil || strings.Contains(err.Error(), payload) || !strings.Contains(err.Error(), "400: Bad Request") {
		t.Fatalf("got %v, want the status only", err)
	}
}
