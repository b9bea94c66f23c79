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

package hookauth

import (
	"net/http"
	"testing"
	"time"
)

// FuzzVerify feeds both schemes any headers and body: a delivery is outside input, read
// before anything is known of its sender. Neither may panic, and neither may accept a
// delivery without the secret's signature (the secret here signs nothing the fuzzer sends).
func FuzzVerify(f *testing.F) {
	f.Add("msg_1", "1800000000", "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=", "sha256=00", "d-1", []byte(`{"a":1}`))
	f.Add("", "", "", "", "", []byte{})
	f.Add("x", "-1", "v1, v1,, ,", "sha256=zz", "", []byte("\xff"))
	secret := []byte("whsec_c2VjcmV0")
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, id, ts, sig, hub, delivery string, body []byte) {
		h := http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {sig},
			"X-Hub-Signature-256": {hub}, "X-Github-Delivery": {delivery}}
		if got, err := (Standard{}).Verify(secret, body, h, now); err == nil {
			t.Errorf("Standard accepted %q (id %q) without the secret's signature", body, got)
		}
		if got, err := (GitHub{}).Verify(secret, body, h, now); err == nil {
			t.Errorf("GitHub accepted %q (id %q) without the secret's signature", body, got)
		}
	})
}
