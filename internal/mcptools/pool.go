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

// Package mcptools gives an Agent's turns the tools of its remote MCP servers, through the
// official MCP Go SDK: it connects (streamable HTTP, falling back to the older HTTP+SSE
// transport), lists the tools once per Agent generation (again after the server notifies
// tools/list_changed), offers them as mcp__<server>__<tool>, and calls them with a
// per-call timeout. A server that is down, slow or refused ends that one call with an error
// result; it never fails a turn.
package mcptools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// The MCP revisions the client asks for. Over streamable HTTP it asks for ProtocolVersion
// (server/discover, SEP-2575); a server that does not serve it answers the SDK's fallback
// initialize in LegacyProtocolVersion or older. The HTTP+SSE transport exists only before
// 2026-07-28, so it asks for LegacyProtocolVersion.
const (
	ProtocolVersion       = "2026-07-28"
	LegacyProtocolVersion = "2025-11-25"
)

// Bounds on what one server may hand a turn; a hostile or broken server cannot flood the
// model's context or the manager's memory.
const (
	DefaultTimeout = 30 * time.Second
	// MinListTimeout is the least time connecting and listing get, whatever the (per call)
	// timeout: a short call bound must not make a busy server's handshake fail.
	MinListTimeout      = 10 * time.Second
	MaxToolsPerServer   = 128
	MaxSchemaBytes      = 32 << 10
	MaxDescriptionBytes = 2 << 10
	// maxServerMessage bounds the error an Agent's status.mcpServers[].message quotes.
	maxServerMessage = 480
	// maxListed bounds how many tools (over all pages) are read from one listing.
	maxListed = 1024
	// RetryAfter is how long a server that failed to connect is not dialled again; it
	// doubles with each failure in a row up to MaxRetryAfter.
	RetryAfter    = 10 * time.Second
	MaxRetryAfter = 5 * time.Minute
)

// SecretReader returns the value of a Secret key in the Agent's namespace for one of its
// header values. The rule of who may reference which Secret belongs here: a reader may
// refuse (SecretsFrom applies the manager's rule).
type SecretReader func(ctx context.Context, agent *sessionsv1alpha1.Agent, ref *corev1.SecretKeySelector) ([]byte, error)

// URLChecker decides whether the manager may dial an MCP server URL for an Agent in
// namespace (the egress allow list); nil allows every http(s) URL.
type URLChecker func(ctx context.Context, namespace string, u *url.URL) error

// Options configure a Pool.
type Options struct {
	// ReadSecret reads header values; nil refuses every header that names a Secret.
	ReadSecret SecretReader
	// CheckURL is asked before a server URL is dialled; nil allows every http(s) URL.
	CheckURL URLChecker
	// Transport carries the HTTP requests (a dialer that checks addresses plugs in here);
	// nil means a clone of http.DefaultTransport.
	Transport http.RoundTripper
	// Clock times the redial back-off; nil means the real clock.
	Clock clock.PassiveClock
	// ReadLimit bounds the bytes of one answer of the remote, read before the SDK decodes
	// it (0: the default of its kind, egress.DefaultMCPReadLimit for an MCP server,
	// egress.DefaultA2AReadLimit for a remote A2A agent).
	ReadLimit int64
}

// Pool keeps, per Agent, one client session per MCP server and the tools each listed.
// It is safe for concurrent use; the engine and the Agent reconciler share one.
type Pool struct {
	opts Options
	mu   sync.Mutex
	m    map[types.NamespacedName]*agentEntry
}

type agentEntry struct {
	version string
	servers []*server
}

// NewPool returns an empty pool.
func NewPool(o Options) *Pool {
	if o.Transport == nil {
		o.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &Pool{opts: o, m: map[types.NamespacedName]*agentEntry{}}
}

// Tool is one MCP tool as offered to the model.
type Tool struct {
	// Name is what the model calls: mcp__<server>__<tool>.
	Name string
	// Server and Remote are the server's name and its own name for the tool.
	Server, Remote string
	Description    string
	// Schema is the server's JSON schema of the arguments.
	Schema []byte
}

// Set is an Agent's MCP tools for one turn, and what each server answered.
type Set struct {
	tools  []Tool
	byName map[string]binding
	status []sessionsv1alpha1.MCPServerStatus
}

type binding struct {
	s      *server
	remote string
}

// Tools are the tools to offer, servers in spec order, each server's tools in its order.
func (s *Set) Tools() []Tool {
	if s == nil {
		return nil
	}
	return s.tools
}

// Status says per server whether it answered initialize and how many tools it offers.
func (s *Set) Status() []sessionsv1alpha1.MCPServerStatus {
	if s == nil {
		return nil
	}
	return s.status
}

// Has says whether name is one of the set's tools.
func (s *Set) Has(name string) bool {
	if s == nil {
		return false
	}
	_, ok := s.byName[name]
	return ok
}

// Call calls a tool of the set. Every failure is an error Result for the model.
func (s *Set) Call(ctx context.Context, name string, args []byte) Result {
	return s.CallCarrying(ctx, name, args, nil)
}

// CallCarrying is Call with the chain extension: carry (nil: none) goes in the request's
// _meta under policy.ChainMetaKey, with the chain as W3C baggage beside it.
func (s *Set) CallCarrying(ctx context.Context, name string, args []byte, carry *policy.CarriedChain) Result {
	if !s.Has(name) {
		return errorResult("unknown tool %q", name)
	}
	b := s.byName[name]
	return b.s.call(ctx, b.remote, args, carry)
}

// Target is what the chain extension's pairs name a tool of the set by: its server's URL
// and the tool ("" for an unknown name).
func (s *Set) Target(name string) string {
	if !s.Has(name) {
		return ""
	}
	b := s.byName[name]
	return b.s.cfg.url + "#" + b.remote
}

// Resolve returns the Agent's MCP tools, connecting and listing where nothing is cached.
// Servers are asked in parallel, each bounded by its timeout; one that fails contributes no
// tools and says why in Status.
func (p *Pool) Resolve(ctx context.Context, agent *sessionsv1alpha1.Agent) *Set {
	key := types.NamespacedName{Namespace: agent.Namespace, Name: agent.Name}
	specs := agent.Spec.Tools.MCPServers
	if len(specs) == 0 {
		p.Forget(key)
		return &Set{}
	}
	cfgs := make([]serverConfig, len(specs))
	for i := range specs {
		cfgs[i] = p.config(ctx, agent, &specs[i])
	}
	servers := p.entry(key, version(agent, cfgs), cfgs)

	type listing struct {
		tools []Tool
		err   error
	}
	out := make([]listing, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { out[i].tools, out[i].err = s.list(ctx) })
	}
	wg.Wait()

	set := &Set{byName: map[string]binding{}}
	for i, s := range servers {
		st := sessionsv1alpha1.MCPServerStatus{Name: s.cfg.name}
		if err := out[i].err; err != nil {
			st.Message = textutil.Truncate(err.Error(), maxServerMessage)
			st.Reason = s.cfg.reason
			var oe *OriginError
			switch {
			case st.Reason != "":
			case errors.As(err, &oe):
				// The refusal alone: what else the SDK wrapped around it says less.
				st.Reason, st.Message = ReasonOriginRefused, textutil.Truncate(oe.Error(), maxServerMessage)
			default:
				st.Reason = ReasonUnreachable
			}
		} else {
			st.Connected = true
			for _, t := range out[i].tools {
				if _, dup := set.byName[t.Name]; dup {
					continue
				}
				set.byName[t.Name] = binding{s: s, remote: t.Remote}
				set.tools = append(set.tools, t)
				st.Tools++
			}
		}
		set.status = append(set.status, st)
	}
	return set
}

// Probe is Resolve for a readiness report, bounded by timeout rather than by the servers'
// own (call) timeouts. A server that has not answered by then is reported so, and is not
// held against the turns (no redial back-off): it may only be slower than a probe waits.
func (p *Pool) Probe(ctx context.Context, agent *sessionsv1alpha1.Agent, timeout time.Duration) *Set {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, probeDeadline(timeout))
	defer cancel()
	return p.Resolve(ctx, agent)
}

// probeDeadline is the cause of a probe's context ending: its timeout.
type probeDeadline time.Duration

func (d probeDeadline) Error() string {
	return fmt.Sprintf("no answer within the %s probe timeout", time.Duration(d))
}

// probeEnded says whether ctx ended because a probe's time ran out.
func probeEnded(ctx context.Context) bool {
	var d probeDeadline
	return ctx.Err() != nil && errors.As(context.Cause(ctx), &d)
}

// probeError says "no answer within the probe timeout" for an error a probe's deadline
// caused, instead of what the SDK made of the cancelled request.
func probeError(ctx context.Context, err error) error {
	if probeEnded(ctx) {
		return context.Cause(ctx)
	}
	return err
}

// Forget closes the sessions of a deleted Agent.
func (p *Pool) Forget(key types.NamespacedName) {
	p.mu.Lock()
	e := p.m[key]
	delete(p.m, key)
	p.mu.Unlock()
	if e != nil {
		closeAll(e.servers)
	}
}

// Close closes every session; the pool stays usable.
func (p *Pool) Close() {
	p.mu.Lock()
	m := p.m
	p.m = map[types.NamespacedName]*agentEntry{}
	p.mu.Unlock()
	for _, e := range m {
		closeAll(e.servers)
	}
}

// entry returns the servers of an Agent at version, replacing (and closing) those of an
// older generation or older header values.
func (p *Pool) entry(key types.NamespacedName, version string, cfgs []serverConfig) []*server {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.m[key]; ok && e.version == version {
		return e.servers
	} else if ok {
		go closeAll(e.servers)
	}
	e := &agentEntry{version: version}
	for _, c := range cfgs {
		e.servers = append(e.servers, newServer(c, &p.opts))
	}
	p.m[key] = e
	return e.servers
}

func closeAll(servers []*server) {
	for _, s := range servers {
		s.close()
	}
}

// serverConfig is one server of an Agent with its header values read.
type serverConfig struct {
	name, url string
	// parsed is url parsed, nil when it is invalid (err says so).
	parsed  *url.URL
	headers http.Header
	allowed []string
	timeout time.Duration
	// err is a configuration failure (a Secret not readable, a URL refused): the server is
	// not dialled. reason names it for status (ReasonEgressRefused, ...).
	err    error
	reason string
}

// Reasons in status.mcpServers[].reason for a server that is not connected. The first three
// are the Agent's configuration, which the Agent's Ready condition reports; an unreachable
// server is only not offered.
const (
	ReasonEgressRefused   = "EgressRefused"
	ReasonSecretNotUsable = "SecretNotUsable"
	ReasonInvalidURL      = "InvalidURL"
	// ReasonOriginRefused: the server pointed the client at another origin (an HTTP+SSE
	// endpoint event or a redirect); it is the server's doing, reported like the above.
	ReasonOriginRefused = "OriginRefused"
	ReasonUnreachable   = "Unreachable"
)

func (p *Pool) config(ctx context.Context, agent *sessionsv1alpha1.Agent, spec *sessionsv1alpha1.MCPServer) serverConfig {
	c := serverConfig{name: spec.Name, url: spec.URL, allowed: spec.AllowedTools, timeout: DefaultTimeout}
	if spec.TimeoutSeconds != nil && *spec.TimeoutSeconds > 0 {
		c.timeout = time.Duration(*spec.TimeoutSeconds) * time.Second
	}
	e := ResolveEndpoint(ctx, &p.opts, agent, spec.URL, spec.Headers)
	c.parsed, c.headers, c.err, c.reason = e.URL, e.Headers, e.Err, e.Reason
	return c
}

// Endpoint is a remote an Agent names (an MCP server, an A2A agent) as the manager may dial
// it: its URL and the header values its Secrets hold, or why it is not dialled.
type Endpoint struct {
	// URL is the parsed URL; nil when it is invalid.
	URL     *url.URL
	Headers http.Header
	// Err is a configuration failure (a Secret not readable, a URL refused), Reason names it
	// for status (ReasonInvalidURL, ReasonEgressRefused, ReasonSecretNotUsable).
	Err    error
	Reason string
}

// ResolveEndpoint judges rawURL (http(s), the egress allow list) and reads the headers'
// Secrets under the Secret rule, as o says, for agent.
func ResolveEndpoint(ctx context.Context, o *Options, agent *sessionsv1alpha1.Agent, rawURL string, headers []sessionsv1alpha1.MCPHeader) Endpoint {
	e := Endpoint{Headers: http.Header{}}
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		e.Err, e.Reason = fmt.Errorf("invalid url: %w", err), ReasonInvalidURL
		return e
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		e.Err, e.Reason = errors.New("url must be http(s)://host/path"), ReasonInvalidURL
		return e
	}
	e.URL = u
	if o.CheckURL != nil {
		if err := o.CheckURL(ctx, agent.Namespace, u); err != nil {
			e.Err, e.Reason = fmt.Errorf("url refused: %w", err), ReasonEgressRefused
			return e
		}
	}
	for _, h := range headers {
		ref := &h.ValueFrom.SecretKeyRef
		if o.ReadSecret == nil {
			e.Err, e.Reason = fmt.Errorf("header %s: secrets cannot be read", h.Name), ReasonSecretNotUsable
			return e
		}
		v, err := o.ReadSecret(ctx, agent, ref)
		if err != nil {
			e.Err, e.Reason = fmt.Errorf("header %s: %w", h.Name, err), ReasonSecretNotUsable
			return e
		}
		e.Headers.Set(h.Name, string(v))
	}
	return e
}

// version identifies an Agent's generation and the header values it resolved to: a new
// generation, a rotated Secret or a Secret that appeared reconnects the servers.
func version(agent *sessionsv1alpha1.Agent, cfgs []serverConfig) string {
	h := sha256.New()
	for _, c := range cfgs {
		fmt.Fprintf(h, "%s\x00", c.name)
		keys := make([]string, 0, len(c.headers))
		for k := range c.headers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(h, "%s=%s\x00", k, c.headers.Get(k))
		}
		if c.err != nil {
			fmt.Fprintf(h, "err=%s\x00", c.err)
		}
	}
	return fmt.Sprintf("%s/%d/%s", agent.UID, agent.Generation, hex.EncodeToString(h.Sum(nil)[:8]))
}

// implementation is how the manager introduces itself to servers.
var implementation = &mcp.Implementation{Name: "agent-session-operator", Version: "v1alpha1"}
