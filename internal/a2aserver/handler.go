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

// Package a2aserver serves every Agent as an A2A 1.0 agent (github.com/a2aproject/a2a-go/v2)
// at /a2a/{namespace}/{agent} on the transcript-store's listener (JSON-RPC at that URL,
// HTTP+JSON under it, 0.3's JSON-RPC beside 1.0's through a2acompat/a2av0), its agent card at
// /a2a/{namespace}/{agent}/.well-known/agent-card.json, signed when a key is configured. A context is a session, a task is a
// SessionSend (its id the send's runId), cancelling a task sets spec.cancel. Every request
// is admitted as /mcp admits one (internal/mcpserver) and every action is made as the caller
// through impersonation (internal/caller): RBAC and the admission webhook judge the caller.
package a2aserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// Route is the listener's route the A2A agents are served under.
const Route = "/a2a/"

// LabelAgent marks the sessions and sends the A2A server made for an agent; tasks are
// found among the sends it marks.
const LabelAgent = "a2a.sessions.agents.dev/agent"

// AnnotationContext is a send's A2A context id, as the caller named it.
const AnnotationContext = "a2a.sessions.agents.dev/context-id"

// maxRequestBytes bounds one request's body (the SDK decodes the body whole).
const maxRequestBytes = 1 << 20

// JWKSPath is where the public keys of the cards' signatures are published.
const JWKSPath = Route + ".well-known/jwks.json"

// Options configure the handler.
type Options struct {
	// Callers admits a caller and acts as it, as /mcp and the console do.
	Callers mcpserver.Options
	// Hub is /events' source of object changes, which streams and waits follow.
	Hub *events.Hub
	// Signer signs the agent cards; nil serves them unsigned and publishes no key.
	Signer *CardSigner
}

// Handler serves the agent cards, the JWKS of their signatures, and each agent's A2A 1.0
// endpoints (JSON-RPC and HTTP+JSON) with 0.3's JSON-RPC beside them at the same URL.
func Handler(o Options) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+JWKSPath, o.jwks)
	mux.HandleFunc("GET "+Route+"{namespace}/{agent}"+a2asrv.WellKnownAgentCardPath, o.card)
	mux.HandleFunc("POST "+Route+"{namespace}/{agent}", o.rpc)
	mux.HandleFunc(Route+"{namespace}/{agent}/{rest...}", o.rest)
	return mux
}

// card answers the agent card, signed when a key is configured, to an admitted caller. The
// JSON is A2A 1.0's card with 0.3's fields beside (url, protocolVersion, preferredTransport),
// so a 0.3 client reads it too.
func (o Options) card(w http.ResponseWriter, r *http.Request) {
	h, ok := o.admit(w, r)
	if !ok {
		return
	}
	body, err := o.Signer.CardJSON(r.Context(), Card(h.agent, agentURL(r)))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// jwks answers the public keys the cards are signed with. They are public: no caller is
// asked for, as a verifier of a card may hold no token.
func (o Options) jwks(w http.ResponseWriter, r *http.Request) {
	body, err := o.Signer.JWKS()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(body)
}

// rpc answers one JSON-RPC request (a stream for SendStreamingMessage and SubscribeToTask):
// A2A 1.0's methods, or 0.3's (message/send, tasks/get, ...), which share no name with them.
func (o Options) rpc(w http.ResponseWriter, r *http.Request) {
	h, ok := o.admit(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	activateChain(w, r)
	if legacyMethod(body) {
		a2av0.NewJSONRPCHandler(h).ServeHTTP(w, r)
		return
	}
	a2asrv.NewJSONRPCHandler(h).ServeHTTP(w, r)
}

// legacyMethod says whether a JSON-RPC request names a method of A2A 0.3: they all hold a
// slash (message/send, tasks/cancel, agent/getAuthenticatedExtendedCard); 1.0's hold none.
func legacyMethod(body []byte) bool {
	var req struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &req) == nil && strings.Contains(req.Method, "/")
}

// rest answers A2A 1.0's HTTP+JSON binding under the agent's URL (message:send,
// tasks/{id}, tasks/{id}:cancel, ...). A task id holds a slash (<uid>/round-1): a client
// that sends it unescaped is understood too.
func (o Options) rest(w http.ResponseWriter, r *http.Request) {
	h, ok := o.admit(w, r)
	if !ok {
		return
	}
	activateChain(w, r)
	r2 := r.Clone(r.Context())
	r2.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
	r2.URL.Path = "/" + r.PathValue("rest")
	r2.URL.RawPath = escapeTaskID(r2.URL.Path)
	a2asrv.NewRESTHandler(h).ServeHTTP(w, r2)
}

// escapeTaskID is the escaped form of a REST path whose task id was sent with its slash
// unescaped (/tasks/<uid>/round-1:cancel): the id as one segment, %2F inside.
func escapeTaskID(path string) string {
	rest, ok := strings.CutPrefix(path, "/tasks/")
	if !ok {
		return ""
	}
	uid, tail, ok := strings.Cut(rest, "/")
	if !ok || uid == "" || (tail != "round-1" && !strings.HasPrefix(tail, "round-1:") && !strings.HasPrefix(tail, "round-1/")) {
		return ""
	}
	return "/tasks/" + url.PathEscape(uid) + "%2F" + tail
}

// admit lets in a caller /mcp would let in (authenticated, allowed to list the namespace's
// sessions, within its rate) asking after an Agent it may read; otherwise it answers the
// HTTP status A2A clients expect of a transport's authentication: 401 or 403.
func (o Options) admit(w http.ResponseWriter, r *http.Request) (*agentHandler, bool) {
	if !o.Callers.HostAllowed(r) {
		http.Error(w, "host or origin not allowed", http.StatusForbidden)
		return nil, false
	}
	ns, name := r.PathValue("namespace"), r.PathValue("agent")
	if len(validation.IsDNS1123Label(ns)) > 0 || !sessionkey.ValidAgentID(name) {
		http.Error(w, "no such agent: want /a2a/<namespace>/<agent id>", http.StatusNotFound)
		return nil, false
	}
	call, code, err := o.Callers.ActionCallIn(w, r, ns, "a2a")
	if err != nil {
		http.Error(w, err.Error(), code)
		return nil, false
	}
	agent, err := lookup.Agent(r.Context(), call.Reader, call.APIReader, ns, name)
	if err == nil && agent == nil {
		err = apierrors.NewNotFound(sessionsv1alpha1.GroupVersion.WithResource("agents").GroupResource(), name)
	}
	if err != nil {
		http.Error(w, err.Error(), mcpserver.APICode(err))
		return nil, false
	}
	return &agentHandler{call: call, agent: agent, hub: o.Hub, user: callerOf(call.ID, ns)}, true
}

// callerOf is the authenticated user a call was made for: its ID is a2a/<namespace>/<user>/<random>
// (mcpserver's callID), the user as TokenReview named it.
func callerOf(id, namespace string) string {
	user := strings.TrimPrefix(id, "a2a/"+namespace+"/")
	if i := strings.LastIndexByte(user, '/'); i >= 0 {
		user = user[:i]
	}
	return user
}

// agentURL is the JSON-RPC endpoint the request's card describes, as the caller reached it.
func agentURL(r *http.Request) string {
	scheme := "https"
	if r.TLS == nil {
		scheme = "http"
	}
	return scheme + "://" + r.Host + strings.TrimSuffix(r.URL.Path, a2asrv.WellKnownAgentCardPath)
}

// a2aErrors are the protocol's errors; any other error is answered as an internal error
// carrying its message (the SDK would answer it without one).
var a2aErrors = []error{a2a.ErrParseError, a2a.ErrInvalidRequest, a2a.ErrMethodNotFound, a2a.ErrInvalidParams,
	a2a.ErrInternalError, a2a.ErrServerError, a2a.ErrTaskNotFound, a2a.ErrTaskNotCancelable,
	a2a.ErrPushNotificationNotSupported, a2a.ErrUnsupportedOperation, a2a.ErrUnsupportedContentType,
	a2a.ErrInvalidAgentResponse, a2a.ErrExtendedCardNotConfigured, a2a.ErrExtensionSupportRequired,
	a2a.ErrVersionNotSupported, a2a.ErrUnauthenticated, a2a.ErrUnauthorized}

// protocolError is err as one of the protocol's errors; nil stays nil.
func protocolError(err error) error {
	if err == nil || slices.ContainsFunc(a2aErrors, func(e error) bool { return errors.Is(err, e) }) {
		return err
	}
	return fmt.Errorf("%w: %s", a2a.ErrInternalError, err.Error())
}

// refused is err as the protocol's error: a refusal by the access layer, RBAC or admission
// is an invalid request carrying the API server's message; nil stays nil.
func refused(err error) error {
	if err == nil {
		return nil
	}
	if r := sessiontools.Refusal(err); r != nil {
		return fmt.Errorf("%w: %s", a2a.ErrInvalidRequest, r.Error)
	}
	return err
}
