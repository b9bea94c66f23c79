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

// Package mcpserver serves the session tools over MCP (streamable HTTP) at /mcp on the
// transcript-store's listener, for agents outside the cluster. The tools are
// internal/sessiontools', the ones in-cluster agents are offered, plus subagents. Every
// request is authenticated by its bearer token and every tool call runs as the caller
// (internal/caller): RBAC and the admission webhook judge the caller, not the sidecar.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
)

// Options configure the handler.
type Options struct {
	// Identify tells who a bearer token is (caller.Reviewer.Identify).
	Identify func(ctx context.Context, token string) (user.Info, error)
	// ClientFor is a client acting as u (caller.Client).
	ClientFor func(u user.Info) (client.WithWatch, error)
	// Store reads transcripts.
	Store sessiontools.Transcripts
	// AllowedHosts are the host names (without port) a request's Host and Origin may name
	// besides localhost; when set, a request naming another host is refused (DNS
	// rebinding). When empty, only the Origin is checked.
	AllowedHosts []string
	// Sessions, with Access, serves the tools' AgentSession reads from an informer cache
	// that has cacheindex's indexes, once Access allows the caller the same get or list on
	// the API server. Without them every read is made as the caller.
	Sessions client.Reader
	// Access checks that a user may do something (caller.Access.Check).
	Access func(ctx context.Context, u user.Info, attrs authzv1.ResourceAttributes) error
	// EventStore keeps each stream's events so a dropped client resumes with
	// Last-Event-ID; nil is an in-memory store.
	EventStore mcp.EventStore
	// Limits bound each user's sessions, streams and API rate.
	Limits SessionLimits
}

// DefaultNamespace is the namespace of a request without ?namespace=.
const DefaultNamespace = "default"

// identity is who calls and where.
type identity struct {
	user      user.Info
	client    client.WithWatch // the caller's own
	reader    client.Reader    // client, or the cache for what the caller may read
	namespace string
	session   string
}

// Handler is the /mcp endpoint.
func Handler(o Options) http.Handler {
	if o.EventStore == nil {
		o.EventStore = mcp.NewMemoryEventStore(nil)
	}
	// One server per MCP session, bound to the namespace and session its first request
	// named; each call still runs as whoever sent it.
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return newServer(o, namespaceOf(r), r.URL.Query().Get("session"), false)
	}, &mcp.StreamableHTTPOptions{EventStore: o.EventStore})
	// The stateless revision serves each request alone, from the server for its URL's
	// namespace and session.
	servers := &statelessServers{build: func(namespace, session string) *mcp.Server { return newServer(o, namespace, session, true) }}
	stateless := mcp.NewStreamableHTTPHandler(servers.get, &mcp.StreamableHTTPOptions{Stateless: true})
	limited := newSessionLimiter(o.Limits, h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r, o.AllowedHosts) {
			http.Error(w, "host or origin not allowed", http.StatusForbidden)
			return
		}
		u, _, err := o.identify(r.Context(), r.Header)
		if err != nil {
			code := http.StatusInternalServerError
			switch {
			case errors.Is(err, caller.ErrUnauthenticated):
				code = http.StatusUnauthorized
				w.Header().Set("WWW-Authenticate", `Bearer realm="agent-sessions"`)
			case errors.Is(err, userlimits.ErrRateLimited):
				code = http.StatusTooManyRequests
			}
			http.Error(w, err.Error(), code)
			return
		}
		// The caller must at least list the namespace's sessions.
		if err := o.mayList(r.Context(), u, namespaceOf(r)); err != nil {
			code := http.StatusInternalServerError
			switch {
			case apierrors.IsForbidden(err):
				code = http.StatusForbidden
			case errors.Is(err, userlimits.ErrRateLimited):
				code = http.StatusTooManyRequests
			}
			http.Error(w, err.Error(), code)
			return
		}
		if speaksStateless(r) {
			next := http.Handler(stateless)
			if q := taskRequest(r); q != nil {
				next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { o.serveTask(w, r, q) })
			}
			limited.serveStateless(w, r, u.GetName(), next)
			return
		}
		limited.serve(w, r, u.GetName())
	})
}

// mayList is nil when u may list the AgentSessions of namespace (caller.ListSessions).
func (o Options) mayList(ctx context.Context, u user.Info, namespace string) error {
	return o.may(ctx, u, caller.ListSessions, namespace, "")
}

// may asks the access layer whether u has r on name in namespace. Without one (Access is
// unset) nothing is allowed: the tools would otherwise read the store for anyone.
func (o Options) may(ctx context.Context, u user.Info, r caller.Right, namespace, name string) error {
	if o.Access == nil {
		return apierrors.NewForbidden(schema.GroupResource{Group: sessionsv1alpha1.GroupVersion.Group, Resource: r.Resource}, name,
			errors.New("this endpoint has no access layer"))
	}
	return o.Access(ctx, u, r.Attributes(namespace, name))
}

// identityOf is who the request's bearer token is, acting in namespace (as session, if
// named), with its clients.
func (o Options) identityOf(ctx context.Context, h http.Header, namespace, session string) (*identity, error) {
	u, c, err := o.identify(ctx, h)
	if err != nil {
		return nil, err
	}
	c = cacheindex.WithIndexes(c)
	return &identity{user: u, client: c, reader: o.readerFor(u, c), namespace: namespace, session: session}, nil
}

// readerFor is c, the caller's own client, reading AgentSessions from the cache when the
// Options have one.
func (o Options) readerFor(u user.Info, c client.WithWatch) client.Reader {
	if o.Sessions == nil || o.Access == nil {
		return c
	}
	return sessionsReader{WithWatch: c, cache: o.Sessions, user: u, check: o.Access}
}

func namespaceOf(r *http.Request) string {
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		return ns
	}
	return DefaultNamespace
}

// identify is who the request's bearer token is, and a client acting as that user.
func (o Options) identify(ctx context.Context, h http.Header) (user.Info, client.WithWatch, error) {
	token, _ := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	u, err := o.Identify(ctx, strings.TrimSpace(token))
	if err != nil {
		return nil, nil, err
	}
	c, err := o.ClientFor(u)
	return u, c, err
}

// hostAllowed refuses a request whose Host, or Origin when sent, names a host that is
// neither localhost nor allowed: a page on another site that rebinds its name to this
// address cannot reach the endpoint.
func hostAllowed(r *http.Request, allowed []string) bool {
	ok := func(hostport string) bool {
		h := hostport
		if hh, _, err := net.SplitHostPort(hostport); err == nil {
			h = hh
		}
		h = strings.Trim(h, "[]")
		if h == "localhost" || h == "127.0.0.1" || h == "::1" {
			return true
		}
		for _, a := range allowed {
			if strings.EqualFold(a, h) {
				return true
			}
		}
		return false
	}
	// Without a list the Host is not checked (a Service is reached by many names); a
	// browser's Origin still must be local, and every request needs a bearer token.
	if len(allowed) > 0 && !ok(r.Host) {
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		_, rest, found := strings.Cut(origin, "://")
		if !found || !ok(rest) {
			return false
		}
	}
	return true
}

// Tools are the session tools, subagents and the approval tools, as /mcp and the console
// offer them.
func Tools() []sessiontools.Tool {
	return append(sessiontools.All(), subagentsTool(), approvalsListTool(), approvalsDecideTool())
}

// ToolNames are the tools /mcp and /console/tools/ offer, each a door of its own (the door
// matrix test needs a row for each).
func ToolNames() []string {
	var names []string
	for _, t := range Tools() {
		names = append(names, t.Name)
	}
	return names
}

// toolsTTL is the cache hint (ttlMs) of tools/list and server/discover: the tools are those of
// the running binary, the same for every caller.
const toolsTTL = 5 * time.Minute

// newServer is the MCP server with the tools; stateless, the server of the 2026-07-28
// revision, which also offers the tasks extension (tasks.go).
func newServer(o Options, namespace, session string, stateless bool) *mcp.Server {
	opts := &mcp.ServerOptions{SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
		switch req.(type) {
		case *mcp.ListToolsRequest, *mcp.ServerRequest[*mcp.DiscoverParams]:
			c.TTLMs, c.CacheScope = int(toolsTTL.Milliseconds()), "public"
		}
	}}
	if stateless {
		opts.Capabilities = &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{},
			Extensions: map[string]any{TasksExtension: map[string]any{}}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "agent-sessions", Version: "v1alpha1"}, opts)
	for _, t := range Tools() {
		s.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Schema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return run(ctx, o, namespace, session, req, t.Run)
			})
	}
	return s
}

// run runs one tool call as the caller and renders its result as the seeds' JSON text.
func run(ctx context.Context, o Options, namespace, session string, req *mcp.CallToolRequest,
	fn func(context.Context, *sessiontools.Call, json.RawMessage) (any, error)) (*mcp.CallToolResult, error) {
	if req.Extra == nil {
		return nil, errors.New("no HTTP request behind this call")
	}
	id, err := o.identityOf(ctx, req.Extra.Header, namespace, session)
	if err != nil {
		return nil, err
	}
	call, err := newCall(ctx, o, id, callID("mcp", id))
	if err != nil {
		return textResult(sessiontools.ErrorResult(err), true), nil
	}
	call.Stamp = stampMeta(req.Params.Meta, nil)
	out, err := fn(ctx, call, req.Params.Arguments)
	if err != nil {
		return markRefusal(textResult(sessiontools.ErrorResult(err), true)), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return markRefusal(textResult(string(b), sessiontools.Refused(out))), nil
}

// markRefusal marks a result that refuses what the call carried of its chain (the webhook
// judged it, policy.JudgeCarried) in its _meta, as the chain extension says: the caller
// recognizes the refusal by the mark, the text stays for people and models.
func markRefusal(r *mcp.CallToolResult) *mcp.CallToolResult {
	if !r.IsError || len(r.Content) == 0 {
		return r
	}
	if t, ok := r.Content[0].(*mcp.TextContent); ok {
		if limit := policy.CarriedRefusalLimit(t.Text); limit != "" {
			r.Meta = mcp.Meta{policy.ChainMetaKey: policy.RefusalMeta(limit)}
		}
	}
	return r
}

func textResult(text string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}
}

// newCall is the call as the caller: a person, or the session ?session= names (the webhook
// admits what it creates only if the caller has act-as on that session).
func newCall(ctx context.Context, o Options, id *identity, callID string) (*sessiontools.Call, error) {
	env := &sessiontools.Env{Client: id.client, Reader: id.reader, APIReader: id.client, Watcher: id.client, Store: o.Store,
		Access: func(ctx context.Context, r caller.Right, name string) error {
			return o.may(ctx, id.user, r, id.namespace, name)
		},
		// The store reads no Secrets: a keyed embedder is the one the manager registered.
		Embeddings: sessiontools.KeylessEmbeddings}
	call := &sessiontools.Call{Env: env, Namespace: id.namespace, ID: callID}
	if id.session == "" {
		return call, nil
	}
	// Speaking for a session is act-as on it, named as the webhook names it.
	if err := o.may(ctx, id.user, caller.ActAs, id.namespace, sessionkey.ObjectName(id.session)); err != nil {
		return nil, err
	}
	l := lookup.New(id.reader, id.client)
	s, err := l.SessionByKey(ctx, id.namespace, id.session)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, errors.New("session " + id.session + " not found")
	}
	a, err := l.Agent(ctx, id.namespace, s.Spec.AgentID)
	if err != nil {
		return nil, err
	}
	if a == nil {
		a = &sessionsv1alpha1.Agent{}
		a.Name = s.Spec.AgentID
	}
	call.Session, call.Agent = s, a
	return call, nil
}
