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
// ES256 or EdDSA. The canonical form is the specification's (section 8.4.1), which the
// official SDKs compute (@a2a-js/sdk's canonicalizeAgentCard, the Python SDK's
// MessageToDict): the card read as the A2A 1.0 protobuf message and written in its JSON
// mapping, so fields outside 1.0 (a 0.3 client's url, protocolVersion and
// preferredTransport) are not signed and a field at its default is left out unless it has
// presence (capabilities.streaming: false is signed, an extension's required: false is
// not); then empty strings, lists and objects left out, keys sorted (RFC 8785).

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
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// CardAlgorithms are the signature algorithms signed with and accepted.
var CardAlgorithms = []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA}

// CardTyp is the signatures' protected typ header, which verifiers ask for.
const CardTyp = "JOSE"

// CanonicalCard is the payload a card's signatures sign: the RFC 8785 canonical JSON of its
// A2A 1.0 protobuf message without signatures, default and empty values left out.
func CanonicalCard(cardJSON []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(cardJSON, &doc); err != nil {
		return nil, fmt.Errorf("the agent card is not one: %w", err)
	}
	var card a2apb.AgentCard
	conformed, err := json.Marshal(conform(doc, card.ProtoReflect().Descriptor()))
	if err != nil {
		return nil, err
	}
	if err := protojson.Unmarshal(conformed, &card); err != nil {
		return nil, fmt.Errorf("the agent card is not one: %w", err)
	}
	card.Signatures = nil
	b, err := protojson.Marshal(&card)
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

// conform keeps of v what the protobuf message md reads, as the SDKs' readers do: members
// md has no field for are left out (0.3's beside 1.0's), and a member whose JSON is not the
// field's shape (an object for a message or map, a list for a repeated field) reads as
// empty, as @a2a-js/sdk's fromJSON reads it (a2a-go writes a security requirement's scheme
// as a bare list where the message holds {"list": [...]}).
func conform(v any, md protoreflect.MessageDescriptor) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}
	}
	if md.FullName() == "google.protobuf.Struct" {
		return obj
	}
	out := map[string]any{}
	for name, e := range obj {
		fd := md.Fields().ByJSONName(name)
		if fd == nil {
			fd = md.Fields().ByName(protoreflect.Name(name))
		}
		if fd == nil || e == nil {
			continue
		}
		if c, ok := conformField(e, fd); ok {
			out[name] = c
		}
	}
	return out
}

// conformField is conform for the member e of field fd; false leaves it out.
func conformField(e any, fd protoreflect.FieldDescriptor) (any, bool) {
	switch {
	case fd.IsMap():
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		out := map[string]any{}
		for k, x := range m {
			if c, ok := conformValue(x, fd.MapValue()); ok {
				out[k] = c
			}
		}
		return out, true
	case fd.IsList():
		l, ok := e.([]any)
		if !ok {
			return nil, false
		}
		out := make([]any, 0, len(l))
		for _, x := range l {
			if c, ok := conformValue(x, fd); ok {
				out = append(out, c)
			}
		}
		return out, true
	}
	return conformValue(e, fd)
}

// conformValue is one value of field fd: a message is conformed; a scalar is kept as it is.
func conformValue(x any, fd protoreflect.FieldDescriptor) (any, bool) {
	if x == nil {
		return nil, false
	}
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		if fd.Message().FullName() == "google.protobuf.Value" {
			return x, true
		}
		return conform(x, fd.Message()), true
	}
	return x, true
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
