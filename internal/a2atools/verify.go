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
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/go-jose/go-jose/v4"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
)

// ReasonCardSignatureInvalid is a card that spec.tools.a2aAgents[].verify asks to be signed
// and whose signature does not verify (or that carries none): the Agent is not Ready.
const ReasonCardSignatureInvalid = "CardSignatureInvalid"

// verify checks the card's signature against the key set v names: a Secret key the Agent
// may use, or a URL under the egress allow list (read with no header: a JWKS is public).
func (c *Client) verify(ctx context.Context, agent *sessionsv1alpha1.Agent, v *sessionsv1alpha1.A2AVerify, body []byte) error {
	keys, err := c.jwks(ctx, agent, v)
	if err != nil {
		return err
	}
	if err := VerifyCard(body, keys); err != nil {
		return &refusal{reason: ReasonCardSignatureInvalid, err: fmt.Errorf("the agent card's signature: %w", err)}
	}
	return nil
}

// jwks reads the key set v names, bounded in time and size.
func (c *Client) jwks(ctx context.Context, agent *sessionsv1alpha1.Agent, v *sessionsv1alpha1.A2AVerify) (*jose.JSONWebKeySet, error) {
	var raw []byte
	switch {
	case v.JWKSSecretRef != nil:
		if c.opts.ReadSecret == nil {
			return nil, &refusal{reason: mcptools.ReasonSecretNotUsable, err: fmt.Errorf("verify.jwksSecretRef: secrets cannot be read")}
		}
		b, err := c.opts.ReadSecret(ctx, agent, v.JWKSSecretRef)
		if err != nil {
			return nil, &refusal{reason: mcptools.ReasonSecretNotUsable, err: fmt.Errorf("verify.jwksSecretRef: %w", err)}
		}
		if len(b) > maxJWKSBytes {
			return nil, &refusal{reason: ReasonCardSignatureInvalid, err: fmt.Errorf("verify.jwksSecretRef: larger than %d bytes", maxJWKSBytes)}
		}
		raw = b
	default:
		ep := mcptools.ResolveEndpoint(ctx, &c.opts, agent, v.JWKSURL, nil)
		if ep.Err != nil {
			return nil, &refusal{reason: ep.Reason, err: fmt.Errorf("verify.jwksURL: %w", ep.Err)}
		}
		b, err := readBounded(ctx, mcptools.OriginClient(c.opts.Transport, ep.URL, http.Header{}), ep.URL.String(), maxJWKSBytes, nil)
		if err != nil {
			return nil, fmt.Errorf("reading verify.jwksURL: %w", err)
		}
		raw = b
	}
	keys := &jose.JSONWebKeySet{}
	if err := json.Unmarshal(raw, keys); err != nil || len(keys.Keys) == 0 {
		return nil, &refusal{reason: ReasonCardSignatureInvalid, err: fmt.Errorf("the verify key set is not a JWKS with keys (%v)", err)}
	}
	return keys, nil
}
