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

package a2aserver

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/go-jose/go-jose/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
)

// The served card is read by both versions' parsers: 0.3's url and protocolVersion beside
// 1.0's interfaces, the security scheme in both shapes; signed, it verifies against the
// published JWKS; without a key it is unsigned and the JWKS is empty.
func TestServedCard(t *testing.T) {
	card := Card(&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "planner"}}, "https://store/a2a/team/planner")
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := a2atools.NewSigningKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*CardSigner{"signed": NewCardSigner(key), "unsigned": nil} {
		t.Run(name, func(t *testing.T) {
			body, err := s.CardJSON(context.Background(), card)
			if err != nil {
				t.Fatal(err)
			}
			var served struct {
				URL             string
				ProtocolVersion string
				SecuritySchemes map[string]map[string]any
				Signatures      []any
			}
			if err := json.Unmarshal(body, &served); err != nil {
				t.Fatal(err)
			}
			scheme := served.SecuritySchemes[SecurityScheme]
			if served.URL != "https://store/a2a/team/planner" || served.ProtocolVersion != "0.3" || scheme["type"] != "http" || scheme["httpAuthSecurityScheme"] == nil {
				t.Errorf("served card %s", body)
			}
			parsed, err := a2av0.NewAgentCardParser()(body)
			if err != nil || len(parsed.SupportedInterfaces) != 3 {
				t.Errorf("the 1.0 parser reads %+v, %v", parsed, err)
			}
			jwks, _ := s.JWKS()
			var set jose.JSONWebKeySet
			if err := json.Unmarshal(jwks, &set); err != nil {
				t.Fatal(err)
			}
			if s == nil {
				if len(served.Signatures) != 0 || len(set.Keys) != 0 {
					t.Errorf("unsigned: %d signatures, %d keys; want none", len(served.Signatures), len(set.Keys))
				}
				return
			}
			if err := a2atools.VerifyCard(body, &set); err != nil {
				t.Errorf("the served card does not verify: %v", err)
			}
		})
	}
}

// The JWKS is served without a token: a verifier of a card may hold none.
func TestJWKSRoute(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := a2atools.NewSigningKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(Options{Signer: NewCardSigner(key)}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil || resp.StatusCode != http.StatusOK || len(set.Keys) != 1 || set.Keys[0].KeyID != key.KeyID() {
		t.Errorf("GET %s: %d, %+v, %v; want the key %s", JWKSPath, resp.StatusCode, set, err, key.KeyID())
	}
}
