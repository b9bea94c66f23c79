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

// Package hookauth verifies the signature of a SessionHook delivery: Standard Webhooks
// (webhook-id, webhook-timestamp, webhook-signature v1 HMAC-SHA256 with a whsec_ secret,
// checked by the Standard Webhooks project's own Go library, the timestamp against an
// injected now) or GitHub's X-Hub-Signature-256. It decides nothing else; the door in
// internal/transcriptstore reads the hook and answers.
package hookauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Tolerance is how far a Standard Webhooks timestamp may be from now, either way.
const Tolerance = 5 * time.Minute

// MaxDeliveryIDLen bounds a delivery id: it names the send, and is kept in an annotation.
const MaxDeliveryIDLen = 256

var (
	// ErrSignature is a signature that is missing, malformed or does not match.
	ErrSignature = errors.New("bad or missing signature")
	// ErrTimestamp is a matching signature whose timestamp is out of the tolerance.
	ErrTimestamp = errors.New("timestamp out of tolerance")
)

// Scheme verifies deliveries signed one way.
type Scheme interface {
	// Verify checks body and header against secret at now and returns the delivery id.
	Verify(secret []byte, body []byte, h http.Header, now time.Time) (string, error)
}

// Standard is Standard Webhooks with a whsec_ (base64) secret.
type Standard struct{}

// Verify implements Scheme.
func (Standard) Verify(secret, body []byte, h http.Header, now time.Time) (string, error) {
	wh, err := standardwebhooks.NewWebhook(strings.TrimSpace(string(secret)))
	if err != nil {
		return "", ErrSignature
	}
	if err := wh.VerifyIgnoringTimestamp(body, h); err != nil {
		return "", ErrSignature
	}
	id := h.Get(standardwebhooks.HeaderWebhookID)
	if len(id) > MaxDeliveryIDLen {
		return "", ErrSignature
	}
	ts, err := strconv.ParseInt(h.Get(standardwebhooks.HeaderWebhookTimestamp), 10, 64)
	if err != nil {
		return "", ErrSignature
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return "", ErrTimestamp
	}
	return id, nil
}

// GitHub is GitHub's X-Hub-Signature-256 (hex HMAC-SHA256 of the body), with
// X-GitHub-Delivery as the delivery id. GitHub signs no timestamp: a replay is caught by
// its delivery id alone.
type GitHub struct{}

// Verify implements Scheme.
func (GitHub) Verify(secret, body []byte, h http.Header, _ time.Time) (string, error) {
	got, ok := strings.CutPrefix(h.Get("X-Hub-Signature-256"), "sha256=")
	if !ok {
		return "", ErrSignature
	}
	sig, err := hex.DecodeString(got)
	if err != nil {
		return "", ErrSignature
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	id := h.Get("X-GitHub-Delivery")
	if !hmac.Equal(sig, m.Sum(nil)) || id == "" || len(id) > MaxDeliveryIDLen {
		return "", ErrSignature
	}
	return id, nil
}

// ValidSecret says whether secret can sign for scheme standard ("whsec_" and base64) or
// github (anything not empty); the message says what is wrong.
func ValidSecret(standard bool, secret []byte) (bool, string) {
	s := strings.TrimSpace(string(secret))
	if s == "" {
		return false, "the signing secret is empty"
	}
	if !standard {
		return true, ""
	}
	if _, err := standardwebhooks.NewWebhook(s); err != nil || !strings.HasPrefix(s, "whsec_") {
		return false, "a Standard Webhooks signing secret is whsec_ followed by base64"
	}
	return true, ""
}
