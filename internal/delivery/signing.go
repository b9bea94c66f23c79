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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of the Standard Webhooks specification (standardwebhooks.com).
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// signingSecretPrefix starts a Standard Webhooks secret; base64 of the key follows.
const signingSecretPrefix = "whsec_"

// ParseSigningSecret is the HMAC key of a Standard Webhooks secret ("whsec_" and base64 of
// 24 to 64 random bytes).
func ParseSigningSecret(s string) ([]byte, error) {
	raw, ok := strings.CutPrefix(strings.TrimSpace(s), signingSecretPrefix)
	if !ok {
		return nil, errors.New("a signing secret starts with whsec_")
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, errors.New("a signing secret is whsec_ and base64")
	}
	if len(key) < 24 || len(key) > 64 {
		return nil, errors.New("a signing secret holds 24 to 64 bytes")
	}
	return key, nil
}

// Sign sets the Standard Webhooks headers of a POST of body: webhook-id (the message's
// id, the same on every attempt so a receiver can drop a repeat), webhook-timestamp (unix
// seconds, now) and webhook-signature ("v1," and base64 of HMAC-SHA256 over
// "id.timestamp.body").
func Sign(h http.Header, key []byte, id string, now time.Time, body []byte) {
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	h.Set(HeaderWebhookID, id)
	h.Set(HeaderWebhookTimestamp, ts)
	h.Set(HeaderWebhookSignature, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}
