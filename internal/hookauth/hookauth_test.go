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
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// opensslHMAC signs msg with key by the openssl command: an implementation of HMAC-SHA256
// independent of this package's and of the Standard Webhooks library's.
func opensslHMAC(t *testing.T, key []byte, msg string) []byte {
	t.Helper()
	cmd := exec.Command("openssl", "dgst", "-sha256", "-mac", "HMAC", "-macopt", "hexkey:"+hex.EncodeToString(key), "-binary")
	cmd.Stdin = strings.NewReader(msg)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl: %v", err)
	}
	return out
}

func TestStandard(t *testing.T) {
	key := []byte("a key of thirty-two bytes, about")
	secret := []byte("whsec_" + base64.StdEncoding.EncodeToString(key))
	now := time.Unix(1_800_000_000, 0)
	body := `{"event":"push"}`
	signed := func(id string, ts time.Time, b string) http.Header {
		sig := base64.StdEncoding.EncodeToString(opensslHMAC(t, key, id+"."+strconv.FormatInt(ts.Unix(), 10)+"."+b))
		return http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {strconv.FormatInt(ts.Unix(), 10)},
			"Webhook-Signature": {"v1," + sig}}
	}
	cases := map[string]struct {
		secret  []byte
		h       http.Header
		body    string
		wantID  string
		wantErr error
	}{
		"signed": {h: signed("msg_1", now, body), body: body, wantID: "msg_1"},
		"one of several signatures": {h: func() http.Header {
			h := signed("msg_1", now, body)
			h.Set("Webhook-Signature", "v1,AAAA "+h.Get("Webhook-Signature"))
			return h
		}(), body: body, wantID: "msg_1"},
		"4 minutes old":   {h: signed("msg_1", now.Add(-4*time.Minute), body), body: body, wantID: "msg_1"},
		"6 minutes old":   {h: signed("msg_1", now.Add(-6*time.Minute), body), body: body, wantErr: ErrTimestamp},
		"6 minutes ahead": {h: signed("msg_1", now.Add(6*time.Minute), body), body: body, wantErr: ErrTimestamp},
		"another body":    {h: signed("msg_1", now, body), body: `{"event":"pull"}`, wantErr: ErrSignature},
		"another id":      {h: func() http.Header { h := signed("msg_1", now, body); h.Set("Webhook-Id", "msg_2"); return h }(), body: body, wantErr: ErrSignature},
		"another secret":  {secret: []byte("whsec_" + base64.StdEncoding.EncodeToString([]byte("another"))), h: signed("msg_1", now, body), body: body, wantErr: ErrSignature},
		"no signature":    {h: http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {"1800000000"}}, body: body, wantErr: ErrSignature},
		"a v2 signature only": {h: func() http.Header {
			h := signed("msg_1", now, body)
			h.Set("Webhook-Signature", strings.Replace(h.Get("Webhook-Signature"), "v1,", "v2,", 1))
			return h
		}(), body: body, wantErr: ErrSignature},
		"a secret that is no base64": {secret: []byte("whsec_!!"), h: signed("msg_1", now, body), body: body, wantErr: ErrSignature},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := secret
			if tc.secret != nil {
				s = tc.secret
			}
			id, err := Standard{}.Verify(s, []byte(tc.body), tc.h, now)
			if !errors.Is(err, tc.wantErr) || id != tc.wantID {
				t.Errorf("Verify = %q, %v; want %q, %v", id, err, tc.wantID, tc.wantErr)
			}
		})
	}
}

func TestGitHub(t *testing.T) {
	secret := []byte("It's a Secret to Everybody")
	body := "Hello, World!"
	// GitHub's documented example: this secret and body give this signature.
	const documented = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got := "sha256=" + hex.EncodeToString(opensslHMAC(t, secret, body)); got != documented {
		t.Fatalf("openssl gives %s, GitHub documents %s", got, documented)
	}
	cases := map[string]struct {
		h       http.Header
		body    string
		wantErr error
	}{
		"signed":         {h: http.Header{"X-Hub-Signature-256": {documented}, "X-Github-Delivery": {"d-1"}}, body: body},
		"another body":   {h: http.Header{"X-Hub-Signature-256": {documented}, "X-Github-Delivery": {"d-1"}}, body: body + "!", wantErr: ErrSignature},
		"sha1 only":      {h: http.Header{"X-Hub-Signature": {"sha1=01157e55c1b4f8f4f0f6a2c54aab3b4e9d0e6f64"}, "X-Github-Delivery": {"d-1"}}, body: body, wantErr: ErrSignature},
		"no delivery id": {h: http.Header{"X-Hub-Signature-256": {documented}}, body: body, wantErr: ErrSignature},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			id, err := GitHub{}.Verify(secret, []byte(tc.body), tc.h, time.Time{})
			if !errors.Is(err, tc.wantErr) || (err == nil && id != "d-1") {
				t.Errorf("Verify = %q, %v; want d-1, %v", id, err, tc.wantErr)
			}
		})
	}
}

func TestValidSecret(t *testing.T) {
	cases := map[string]struct {
		standard bool
		secret   string
		want     bool
	}{
		"whsec":            {standard: true, secret: "whsec_" + base64.StdEncoding.EncodeToString([]byte("k")), want: true},
		"no prefix":        {standard: true, secret: base64.StdEncoding.EncodeToString([]byte("k"))},
		"not base64":       {standard: true, secret: "whsec_!!"},
		"empty":            {standard: true},
		"github, any text": {secret: "anything", want: true},
		"github, empty":    {secret: "  "},
	}
	for name, tc := range cases {
		if got, _ := ValidSecret(tc.standard, []byte(tc.secret)); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}
