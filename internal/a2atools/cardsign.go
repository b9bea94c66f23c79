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

// Signed agent cards, as A2A 1.0 defines them, for our cards (internal/a2aserver signs) and
// remote agents' (verify.go checks): a JWS (RFC 7515) whose payload, detached, is the RFC
// 8785 canonical JSON of the card without its signatures, in the card's signatures field;
// ES256 or EdDSA. The canonical form is the one other platforms' verifiers compute
// (@a2a-js/sdk's canonicalizeAgentCard): the card's A2A 1.0 fields only (a 0.3 client's url,
// protocolVersion and preferredTransport beside them are not signed), with empty strings,
// lists and objects left out, keys sorted (RFC 8785).

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
)

// CardAlgorithms are the signature algorithms signed with and accepted.
var CardAlgorithms = []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA}

// CardTyp is the signatures' protected typ header, which verifiers ask for.
const CardTyp = "JOSE"

// CanonicalCard is the payload a card's signatures sign: the RFC 8785 canonical JSON of its
// A2A 1.0 fields without signatures, empty values left out.
func CanonicalCard(cardJSON []byte) ([]byte, error) {
	var card a2a.AgentCard
	if err := json.Unmarshal(cardJSON, &card); err != nil {
		return nil, fmt.Errorf("the agent card is not one: %w", err)
	}
	card.Signatures = nil
	b, err := json.Marshal(&card)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	v = cleanEmpty(v)
	if v == nil {
		v = map[string]any{}
	}
	if b, err = json.Marshal(v); err != nil {
		return nil, err
	}
	return jcs.Transform(b)
}

// cleanEmpty leaves out empty strings, nulls, and lists and objects left empty, at every depth.
func cleanEmpty(v any) any {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		if t == "" {
			return nil
		}
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			if c := cleanEmpty(e); c != nil {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case map[string]any:
		for k, e := range t {
			if c := cleanEmpty(e); c != nil {
				t[k] = c
			} else {
				delete(t, k)
			}
		}
		if len(t) == 0 {
			return nil
		}
	}
	return v
}

// SigningKey is a card signing key: an ECDSA P-256 key (ES256) or an Ed25519 key (EdDSA), with its
// key id, the RFC 7638 thumbprint of its public key.
type SigningKey struct {
	signer jose.Signer
	public jose.JSONWebKey
}

// ParseSigningKey reads a PEM private key (PKCS #8, or SEC 1 "EC PRIVATE KEY").
func ParseSigningKey(pemBytes []byte) (*SigningKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("card signing key: no PEM block")
	}
	var priv any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		priv, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		priv, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("card signing key: %w", err)
	}
	return NewSigningKey(priv)
}

// NewSigningKey is a signing key of priv: *ecdsa.PrivateKey on P-256, or ed25519.PrivateKey.
func NewSigningKey(priv any) (*SigningKey, error) {
	var alg jose.SignatureAlgorithm
	var pub any
	switch k := priv.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, errors.New("card signing key: an ECDSA key must be on P-256 (ES256)")
		}
		alg, pub = jose.ES256, k.Public()
	case ed25519.PrivateKey:
		alg, pub = jose.EdDSA, k.Public()
	default:
		return nil, fmt.Errorf("card signing key: %T is neither ECDSA P-256 nor Ed25519", priv)
	}
	jwk := jose.JSONWebKey{Key: pub, Algorithm: string(alg), Use: "sig"}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	jwk.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	opts := (&jose.SignerOptions{}).WithType(CardTyp).WithHeader(jose.HeaderKey("kid"), jwk.KeyID)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: priv}, opts)
	if err != nil {
		return nil, err
	}
	return &SigningKey{signer: signer, public: jwk}, nil
}

// KeyID is the key's kid.
func (k *SigningKey) KeyID() string { return k.public.KeyID }

// JWKS is the JSON Web Key Set of the key's public half.
func (k *SigningKey) JWKS() ([]byte, error) {
	return json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{k.public}})
}

// Sign returns cardJSON with its signature by k in signatures (any earlier ones dropped).
// The rest of the JSON (a 0.3 client's fields among it) is kept as it was.
func (k *SigningKey) Sign(cardJSON []byte) ([]byte, error) {
	payload, err := CanonicalCard(cardJSON)
	if err != nil {
		return nil, err
	}
	jws, err := k.signer.Sign(payload)
	if err != nil {
		return nil, err
	}
	compact, err := jws.DetachedCompactSerialize()
	if err != nil {
		return nil, err
	}
	protected, signature, ok := cutDetached(compact)
	if !ok {
		return nil, errors.New("card signing: the JWS is not in compact form")
	}
	var card map[string]json.RawMessage
	if err := json.Unmarshal(cardJSON, &card); err != nil {
		return nil, err
	}
	sigs, err := json.Marshal([]a2a.AgentCardSignature{{Protected: protected, Signature: signature}})
	if err != nil {
		return nil, err
	}
	card["signatures"] = sigs
	return json.Marshal(card)
}

// cutDetached splits a detached compact JWS (protected..signature).
func cutDetached(compact string) (string, string, bool) {
	for i := 0; i+1 < len(compact); i++ {
		if compact[i] == '.' && compact[i+1] == '.' {
			return compact[:i], compact[i+2:], true
		}
	}
	return "", "", false
}

// ErrCardUnsigned is a card that carries no signature.
var ErrCardUnsigned = errors.New("the agent card is not signed")

// VerifyCard checks that one of the card's signatures verifies with a key of keys (its kid
// names it) over the card's canonical JSON, by ES256 or EdDSA.
func VerifyCard(cardJSON []byte, keys *jose.JSONWebKeySet) error {
	var card struct {
		Signatures []a2a.AgentCardSignature `json:"signatures"`
	}
	if err := json.Unmarshal(cardJSON, &card); err != nil {
		return fmt.Errorf("the agent card is not one: %w", err)
	}
	if len(card.Signatures) == 0 {
		return ErrCardUnsigned
	}
	payload, err := CanonicalCard(cardJSON)
	if err != nil {
		return err
	}
	var last error
	for _, s := range card.Signatures {
		if last = verifyOne(s, payload, keys); last == nil {
			return nil
		}
	}
	return fmt.Errorf("no signature of the agent card verifies: %w", last)
}

func verifyOne(s a2a.AgentCardSignature, payload []byte, keys *jose.JSONWebKeySet) error {
	jws, err := jose.ParseDetached(s.Protected+".."+s.Signature, payload, CardAlgorithms)
	if err != nil {
		return err
	}
	h := jws.Signatures[0].Protected
	if h.KeyID == "" {
		return errors.New("the signature names no key (kid)")
	}
	found := keys.Key(h.KeyID)
	if len(found) == 0 {
		return fmt.Errorf("no key %q in the key set", h.KeyID)
	}
	var last error
	for _, k := range found {
		if _, last = jws.Verify(k.Key); last == nil {
			return nil
		}
	}
	return last
}
