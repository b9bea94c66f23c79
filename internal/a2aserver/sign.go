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
	"bytes"
	"context"
	"encoding/json"
	"maps"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
)

// CardSigner signs the cards served with one key (--a2a-card-signing-key, from the Secret the
// chart's a2a.cardSigning.secretName names) and publishes its public half at JWKSPath. A nil
// signer serves cards unsigned and an empty key set.
type CardSigner struct {
	key *a2atools.SigningKey
}

// NewCardSigner signs with key.
func NewCardSigner(key *a2atools.SigningKey) *CardSigner { return &CardSigner{key: key} }

// CardJSON is the card as served: A2A 1.0's card with 0.3's fields beside, and its signature.
func (s *CardSigner) CardJSON(ctx context.Context, card *a2a.AgentCard) ([]byte, error) {
	body, err := unionCard(ctx, card)
	if err != nil || s == nil || s.key == nil {
		return body, err
	}
	return s.key.Sign(body)
}

// unionCard is the card in the JSON both versions' clients read: the SDK's 0.3 compatible
// card (a2av0), each security scheme in both shapes. The SDK writes 0.3's ("type": "http")
// only, which 1.0 readers (the SDKs' 1.0 parsers, the verifiers' canonical form) do not
// read; 1.0's ("httpAuthSecurityScheme": {...}) is added beside it, which 0.3 readers ignore.
func unionCard(ctx context.Context, card *a2a.AgentCard) ([]byte, error) {
	body, err := a2av0.NewStaticAgentCardProducer(card).(a2asrv.AgentCardJSONProducer).CardJSON(ctx)
	if err != nil {
		return nil, err
	}
	if len(card.SecuritySchemes) == 0 {
		var compact bytes.Buffer
		err = json.Compact(&compact, body)
		return compact.Bytes(), err
	}
	var doc map[string]json.RawMessage
	var legacy, current map[string]map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc["securitySchemes"], &legacy); err != nil {
		return nil, err
	}
	b, err := json.Marshal(card.SecuritySchemes)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &current); err != nil {
		return nil, err
	}
	for name, fields := range current {
		if legacy[name] == nil {
			legacy[name] = map[string]json.RawMessage{}
		}
		maps.Copy(legacy[name], fields)
	}
	if doc["securitySchemes"], err = json.Marshal(legacy); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// JWKS is the key set verifiers read the signing key from.
func (s *CardSigner) JWKS() ([]byte, error) {
	if s == nil || s.key == nil {
		return []byte(`{"keys":[]}`), nil
	}
	return s.key.JWKS()
}
