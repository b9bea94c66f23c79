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
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agent-sessions/agent-session-operator/internal/egress"
)

// The webhook sink's signature is checked by the Standard Webhooks reference library (not
// our code): it accepts what we sent, and refuses the same headers on a tampered body.
func TestWebhookSignatureVerifiesWithStandardWebhooks(t *testing.T) {
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	key, err := ParseSigningSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		body    []byte
		headers http.Header
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, _ = io.ReadAll(r.Body)
		headers = r.Header.Clone()
	}))
	defer srv.Close()
	allow, _ := egress.Parse([]string{srv.URL}, false)
	msg := Message{Namespace: "ns", SessionKey: "agent:main:main", Channel: "webchat", Text: "done", IdempotencyKey: "uid/announce"}
	if err := New(allow).Deliver(context.Background(), Sink{URL: srv.URL, SigningKey: key}, msg); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(body, headers); err != nil {
		t.Fatalf("the reference library refuses our signature: %v (headers %v)", err, headers)
	}
	if headers.Get(HeaderWebhookID) != "uid/announce" {
		t.Errorf("webhook-id = %q, want the idempotency key", headers.Get(HeaderWebhookID))
	}
	tampered := []byte(strings.Replace(string(body), "done", "DONE", 1))
	if err := wh.Verify(tampered, headers); err == nil {
		t.Fatal("the reference library accepts a tampered body")
	}
}

func TestParseSigningSecret(t *testing.T) {
	good := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 32))
	cases := map[string]bool{good: true, "whsec_!!": false, base64.StdEncoding.EncodeToString(make([]byte, 32)): false,
		"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 8)): false}
	for s, ok := range cases {
		if _, err := ParseSigningSecret(s); (err == nil) != ok {
			t.Errorf("ParseSigningSecret(%q): err = %v, want ok=%v", s, err, ok)
		}
	}
}
