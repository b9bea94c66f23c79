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

package a2atools

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

const cardJSON = `{"name":"planner","description":"plans trips","version":"v1alpha1",
"supportedInterfaces":[{"url":"https://store/a2a/team/planner","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{"streaming":true,"pushNotifications":false,"extensions":[{"uri":"urn:x","required":false}]},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"converse","name":"converse","description":"plans trips","tags":["chat"],"examples":[]}],
"url":"https://store/a2a/team/planner","protocolVersion":"0.3","iconUrl":""}`

// The canonical form is the card's 1.0 fields in the protobuf JSON mapping, sorted, empty
// and 0.3-only values left out, signatures never included: a bool with presence keeps its
// false (pushNotifications), one without leaves it out (an extension's required), as the
// official SDKs sign.
func TestCanonicalCard(t *testing.T) {
	got, err := CanonicalCard([]byte(cardJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"capabilities":{"extensions":[{"uri":"urn:x"}],"pushNotifications":false,"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"description":"plans trips","name":"planner","skills":[{"description":"plans trips","id":"converse","name":"converse","tags":["chat"]}],` +
		`"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://store/a2a/team/planner"}],"version":"v1alpha1"}`
	if string(got) != want {
		t.Errorf("canonical\n got %s\nwant %s", got, want)
	}
	signed := strings.Replace(cardJSON, `"iconUrl":""`, `"signatures":[{"protected":"x","signature":"y"}]`, 1)
	if again, _ := CanonicalCard([]byte(signed)); string(again) != want {
		t.Errorf("the signatures are part of the canonical form: %s", again)
	}
}

func cardKeys(t *testing.T) map[string]any {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"ES256": ec, "EdDSA": ed}
}

// A card signed with a key verifies against its JWKS; tampered, unsigned or signed by
// another key, it does not.
func TestSignAndVerifyCard(t *testing.T) {
	for alg, priv := range cardKeys(t) {
		t.Run(alg, func(t *testing.T) {
			k, err := NewSigningKey(priv)
			if err != nil {
				t.Fatal(err)
			}
			signed, err := k.Sign([]byte(cardJSON))
			if err != nil {
				t.Fatal(err)
			}
			var set jose.JSONWebKeySet
			b, _ := k.JWKS()
			if err := json.Unmarshal(b, &set); err != nil || len(set.Keys) != 1 || set.Keys[0].Algorithm != alg {
				t.Fatalf("JWKS %s: %v", b, err)
			}
			if err := VerifyCard(signed, &set); err != nil {
				t.Errorf("the signed card does not verify: %v", err)
			}
			var header struct{ Alg, Kid, Typ string }
			var c struct {
				Signatures []struct{ Protected string }
				URL        string
			}
			_ = json.Unmarshal(signed, &c)
			if len(c.Signatures) != 1 || c.URL == "" {
				t.Fatalf("signed card %s", signed)
			}
			if err := json.Unmarshal(mustB64(t, c.Signatures[0].Protected), &header); err != nil || header.Alg != alg || header.Kid != k.KeyID() || header.Typ != CardTyp {
				t.Errorf("protected header %+v, want alg %s, kid %s, typ %s", header, alg, k.KeyID(), CardTyp)
			}
			tampered := []byte(strings.Replace(string(signed), "plans trips", "plans heists", 1))
			if err := VerifyCard(tampered, &set); err == nil {
				t.Error("a tampered card verifies")
			}
			if err := VerifyCard([]byte(cardJSON), &set); !errors.Is(err, ErrCardUnsigned) {
				t.Errorf("an unsigned card: %v, want %v", err, ErrCardUnsigned)
			}
			other, _ := NewSigningKey(cardKeys(t)[alg])
			ob, _ := other.JWKS()
			var otherSet jose.JSONWebKeySet
			_ = json.Unmarshal(ob, &otherSet)
			if err := VerifyCard(signed, &otherSet); err == nil {
				t.Error("a card verifies against another key's JWKS")
			}
		})
	}
}

// Keys other than P-256 ECDSA and Ed25519 are refused.
func TestNewKeyRefusesOtherKeys(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	for name, k := range map[string]any{"RSA": rk, "P-384": p384} {
		if _, err := NewSigningKey(k); err == nil {
			t.Errorf("%s: a key was made", name)
		}
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
