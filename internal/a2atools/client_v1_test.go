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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
)

// echoV1 is an A2A 1.0 agent (a2a-go/v2) answering "echo1: <text>" as its task's artifact.
type echoV1 struct{}

func (echoV1) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("echo1: "+ec.Message.Parts[0].Text())), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (echoV1) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// v1Remote serves echoV1 over A2A 1.0's JSON-RPC at /rpc and 0.3's at /rpc0, its card
// listing 0.3 first, then 1.0, signed by key when given and changed by tamper afterwards;
// its JWKS at /jwks. hits counts the requests to each endpoint.
type v1Remote struct {
	srv  *httptest.Server
	key  *SigningKey
	hits map[string]*atomic.Int32
}

func newV1Remote(t *testing.T, key *SigningKey, tamper func([]byte) []byte) *v1Remote {
	r := &v1Remote{key: key, hits: map[string]*atomic.Int32{"/rpc": {}, "/rpc0": {}}}
	mux := http.NewServeMux()
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	card := &a2a.AgentCard{Name: "echo1", Description: "echoes in 1.0", Version: "1",
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: r.srv.URL + "/rpc0", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
			{URL: r.srv.URL + "/rpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
		},
		Capabilities: a2a.AgentCapabilities{Streaming: true}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "echo", Description: "says it back", Tags: []string{"echo"}}}}
	body, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	if key != nil {
		if body, err = key.Sign(body); err != nil {
			t.Fatal(err)
		}
	}
	if tamper != nil {
		body = tamper(body)
	}
	mux.HandleFunc(a2asrv.WellKnownAgentCardPath, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		b, _ := r.key.JWKS()
		_, _ = w.Write(b)
	})
	h := a2asrv.NewHandler(echoV1{})
	for path, handler := range map[string]http.Handler{"/rpc": a2asrv.NewJSONRPCHandler(h), "/rpc0": a2av0.NewJSONRPCHandler(h)} {
		mux.HandleFunc(path, func(w http.ResponseWriter, req *http.Request) {
			r.hits[path].Add(1)
			handler.ServeHTTP(w, req)
		})
	}
	return r
}

func newCardKey(t *testing.T) *SigningKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewSigningKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// verifyOptions read the key set jwks's JWKS from the Secret keys, the header from token.
func verifyOptions(jwks *SigningKey) mcptools.Options {
	return mcptools.Options{ReadSecret: func(_ context.Context, _ *sessionsv1alpha1.Agent, ref *corev1.SecretKeySelector) ([]byte, error) {
		if ref.Name == "token" {
			return []byte("Bearer s3cret"), nil
		}
		return jwks.JWKS()
	}}
}

func agentVerifying(remote string, v *sessionsv1alpha1.A2AVerify) *sessionsv1alpha1.Agent {
	a := agentWith(remote)
	a.Spec.Tools.A2AAgents[0].Headers = nil
	a.Spec.Tools.A2AAgents[0].Verify = v
	return a
}

var jwksSecret = &sessionsv1alpha1.A2AVerify{JWKSSecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "keys"}, Key: "jwks.json"}}

// A card offering A2A 1.0 and 0.3 is called in 1.0, whatever order it lists them in.
func TestCallPicksA2AOneOverZeroThree(t *testing.T) {
	r := newV1Remote(t, nil, nil)
	set := NewClient(options("")).Resolve(t.Context(), agentVerifying(r.srv.URL, nil))
	if d := cmp.Diff([]sessionsv1alpha1.A2AAgentStatus{{Name: "echo", CardRead: true, AgentName: "echo1", Streaming: true, ProtocolVersion: "1.0"}}, set.Status()); d != "" {
		t.Fatalf("status (-want +got):\n%s", d)
	}
	if got := set.Call(t.Context(), "a2a__echo", []byte(`{"message":"hi"}`)); got != (mcptools.Result{Text: "echo1: hi"}) {
		t.Errorf("result %+v, want echo1: hi", got)
	}
	if r.hits["/rpc"].Load() == 0 || r.hits["/rpc0"].Load() != 0 {
		t.Errorf("1.0 endpoint hit %d times, 0.3 endpoint %d; want 1.0 only", r.hits["/rpc"].Load(), r.hits["/rpc0"].Load())
	}
}

// With verify, a card whose signature verifies with the named keys (a Secret's JWKS, or a
// JWKS URL) is used; an unsigned, tampered or otherwise signed one is refused with
// CardSignatureInvalid, and no tool is offered.
func TestVerifiedCards(t *testing.T) {
	key, other := newCardKey(t), newCardKey(t)
	tamper := func(b []byte) []byte { return []byte(strings.Replace(string(b), "echoes in 1.0", "does anything", 1)) }
	for name, tc := range map[string]struct {
		signer   *SigningKey
		tamper   func([]byte) []byte
		keys     *SigningKey
		byURL    bool
		verified bool
	}{
		"signed, keys from a Secret":  {signer: key, keys: key, verified: true},
		"signed, keys from a URL":     {signer: key, keys: key, byURL: true, verified: true},
		"unsigned":                    {keys: key},
		"tampered after signing":      {signer: key, tamper: tamper, keys: key},
		"signed by another key":       {signer: other, keys: key},
		"another key's set, from URL": {signer: other, keys: key, byURL: true},
	} {
		t.Run(name, func(t *testing.T) {
			r := newV1Remote(t, tc.signer, tc.tamper)
			v := jwksSecret
			if tc.byURL {
				v = &sessionsv1alpha1.A2AVerify{JWKSURL: r.srv.URL + "/jwks"}
				r.key = tc.keys
			}
			set := NewClient(verifyOptions(tc.keys)).Resolve(t.Context(), agentVerifying(r.srv.URL, v))
			st := set.Status()
			if len(st) != 1 {
				t.Fatalf("status %+v", st)
			}
			if tc.verified {
				if !st[0].CardRead || !st[0].SignatureVerified || len(set.Tools()) != 1 {
					t.Errorf("status %+v, tools %+v: want the card read and verified, one tool", st[0], set.Tools())
				}
				return
			}
			if st[0].CardRead || st[0].Reason != ReasonCardSignatureInvalid || len(set.Tools()) != 0 {
				t.Errorf("status %+v, tools %+v: want refused with %s, no tool", st[0], set.Tools(), ReasonCardSignatureInvalid)
			}
		})
	}
}

// An A2A 0.3 agent, whose cards carry no signature, is refused when verify asks for one.
func TestVerifyRefusesAZeroThreeAgentsCard(t *testing.T) {
	srv, _ := remoteAgent(t, true, "")
	a := agentWith(srv.URL)
	a.Spec.Tools.A2AAgents[0].Verify = jwksSecret
	set := NewClient(verifyOptions(newCardKey(t))).Resolve(t.Context(), a)
	if st := set.Status(); len(st) != 1 || st[0].CardRead || st[0].Reason != ReasonCardSignatureInvalid {
		t.Errorf("status %+v, want the card refused with %s", st, ReasonCardSignatureInvalid)
	}
}
