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

// Package a2atools gives an Agent's turns its remote A2A agents (spec.tools.a2aAgents) as
// tools a2a__<name>, through the official Go SDK (github.com/a2aproject/a2a-go/v2): it reads
// each agent card once per Agent generation (verifying its signature when the Agent asks),
// picks A2A 1.0 over JSON-RPC from the card's supportedInterfaces, else 0.3 (a2acompat/a2av0),
// and a call sends the message, waits for the task (streaming when the card offers it) and
// returns its final artifacts' text. The
// remotes are dialled as MCP servers are (internal/mcptools): under the egress allow list,
// with header values from Secrets the Agent may use, and only on the configured origin. A
// call that ends early (its run cancelled, its timeout) cancels the remote task.
package a2atools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"k8s.io/apimachinery/pkg/types"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// NamePrefix starts the name of every remote A2A agent's tool.
const NamePrefix = "a2a__"

// ToolName is the tool the model sees for the remote agent name: a2a__<name>.
func ToolName(name string) string { return NamePrefix + name }

// Bounds on what one remote may hand a turn or the manager.
const (
	DefaultTimeout = 120 * time.Second
	// CardTimeout bounds reading a card.
	CardTimeout  = 10 * time.Second
	maxCardBytes = 1 << 20
	maxJWKSBytes = 64 << 10
	// maxStatusMessage bounds the error an Agent's status.a2aAgents[].message quotes.
	maxStatusMessage = 480
)

// Schema is the tool's arguments: the message to send.
var Schema = json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"the message to send to the remote agent"}},"required":["message"]}`)

// Client keeps, per Agent generation, the cards its remote agents served. It is safe for
// concurrent use; the engine and the Agent reconciler share one.
type Client struct {
	opts mcptools.Options
	mu   sync.Mutex
	m    map[types.NamespacedName]*agentEntry
}

type agentEntry struct {
	generation int64
	uid        types.UID
	cards      map[string]*card
}

// card is a remote agent's card as read, with the interface calls use.
type card struct {
	*a2a.AgentCard
	iface    *a2a.AgentInterface
	verified bool
}

// NewClient returns a client dialling as o says (mcptools.ManagerOptions in the manager).
// Every answer of a remote, its card included, is read up to egress.A2ALimit(o.ReadLimit)
// before the SDK decodes it.
func NewClient(o mcptools.Options) *Client {
	if o.Transport == nil {
		o.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	o.Transport = egress.LimitBodies(o.Transport, egress.A2ALimit(o.ReadLimit))
	return &Client{opts: o, m: map[types.NamespacedName]*agentEntry{}}
}

// Tool is one remote agent as offered to the model.
type Tool struct {
	Name        string
	Description string
}

// Set is an Agent's remote agents for one turn, and what reading each card found.
type Set struct {
	tools   []Tool
	remotes map[string]*remote
	status  []sessionsv1alpha1.A2AAgentStatus
}

// remote is one remote agent with its card read.
type remote struct {
	name    string
	card    *card
	client  *http.Client
	timeout time.Duration
}

// Tools are the remote agents whose cards were read, in spec order.
func (s *Set) Tools() []Tool {
	if s == nil {
		return nil
	}
	return s.tools
}

// Status says per remote agent whether its card was read.
func (s *Set) Status() []sessionsv1alpha1.A2AAgentStatus {
	if s == nil {
		return nil
	}
	return s.status
}

// Resolve reads the cards of the Agent's remote agents that are not known for its
// generation yet. A remote that is refused or down offers no tool and says why in Status.
func (c *Client) Resolve(ctx context.Context, agent *sessionsv1alpha1.Agent) *Set {
	set := &Set{remotes: map[string]*remote{}}
	entry := c.entry(agent)
	for i := range agent.Spec.Tools.A2AAgents {
		spec := &agent.Spec.Tools.A2AAgents[i]
		st := sessionsv1alpha1.A2AAgentStatus{Name: spec.Name}
		r, err := c.remote(ctx, agent, spec, entry)
		if err != nil {
			st.Reason, st.Message = reasonOf(err), textutil.Truncate(err.Error(), maxStatusMessage)
			set.status = append(set.status, st)
			continue
		}
		st.CardRead, st.AgentName, st.Streaming = true, textutil.Truncate(r.card.Name, 256), r.card.Capabilities.Streaming
		st.ProtocolVersion, st.SignatureVerified = versionOf(r.card.iface), r.card.verified
		set.status = append(set.status, st)
		name := ToolName(spec.Name)
		set.remotes[name] = r
		set.tools = append(set.tools, Tool{Name: name, Description: description(spec.Name, r.card.AgentCard)})
	}
	return set
}

// Probe is Resolve for a readiness report, bounded by timeout.
func (c *Client) Probe(ctx context.Context, agent *sessionsv1alpha1.Agent, timeout time.Duration) *Set {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.Resolve(ctx, agent)
}

// Forget drops what is known of a deleted Agent.
func (c *Client) Forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// entry is the Agent's cache of cards, emptied for a new generation.
func (c *Client) entry(agent *sessionsv1alpha1.Agent) *agentEntry {
	key := types.NamespacedName{Namespace: agent.Namespace, Name: agent.Name}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[key]
	if e == nil || e.generation != agent.Generation || e.uid != agent.UID {
		e = &agentEntry{generation: agent.Generation, uid: agent.UID, cards: map[string]*card{}}
		c.m[key] = e
	}
	return e
}

// remote is one remote agent ready to call: its URL and headers judged, its card read (from
// the cache when this generation read it). Secrets are read for every turn, so a rotated
// one takes effect at once.
func (c *Client) remote(ctx context.Context, agent *sessionsv1alpha1.Agent, spec *sessionsv1alpha1.A2AAgent, e *agentEntry) (*remote, error) {
	ep := mcptools.ResolveEndpoint(ctx, &c.opts, agent, spec.URL, spec.Headers)
	if ep.Err != nil {
		return nil, &refusal{reason: ep.Reason, err: ep.Err}
	}
	r := &remote{name: spec.Name, client: mcptools.OriginClient(c.opts.Transport, ep.URL, ep.Headers), timeout: DefaultTimeout}
	if spec.TimeoutSeconds != nil && *spec.TimeoutSeconds > 0 {
		r.timeout = time.Duration(*spec.TimeoutSeconds) * time.Second
	}
	c.mu.Lock()
	r.card = e.cards[spec.Name]
	c.mu.Unlock()
	if r.card != nil {
		return r, nil
	}
	body, err := readCard(ctx, r.client, ep.URL)
	if err != nil {
		return nil, err
	}
	verified := false
	if spec.Verify != nil {
		if err := c.verify(ctx, agent, spec.Verify, body); err != nil {
			return nil, err
		}
		verified = true
	}
	cd, err := parseCard(body, !verified)
	if err != nil {
		return nil, err
	}
	if cd.iface, err = pickInterface(cd.AgentCard, ep.URL); err != nil {
		return nil, err
	}
	cd.verified = verified
	c.mu.Lock()
	e.cards[spec.Name] = cd
	c.mu.Unlock()
	r.card = cd
	return r, nil
}

// readCard reads the agent card at base + /.well-known/agent-card.json, bounded in time and
// size, asking for A2A 1.0's card (A2A-Version: 1.0): a server that serves both versions
// serves its 1.0 card then, the one its signatures sign.
func readCard(ctx context.Context, hc *http.Client, base *url.URL) ([]byte, error) {
	body, err := readBounded(ctx, hc, base.JoinPath("/.well-known/agent-card.json").String(), maxCardBytes,
		http.Header{a2a.SvcParamVersion: {string(a2a.Version)}})
	if err != nil {
		return nil, fmt.Errorf("reading the agent card: %w", err)
	}
	return body, nil
}

// readBounded GETs u with header, bounded by CardTimeout and limit bytes.
func readBounded(ctx context.Context, hc *http.Client, u string, limit int, header http.Header) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, CardTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(body) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return body, nil
}

// parseCard reads a card of either version (the SDK's 0.3 compatible parser reads 1.0, 0.3
// and the union of both). A 0.3 card that names no transport is JSON-RPC, as 0.3 defines;
// legacy says such a card may be used (not when its signature had to verify: 0.3's url is
// not among the signed fields).
func parseCard(body []byte, legacy bool) (*card, error) {
	parsed := &a2a.AgentCard{}
	if err := json.Unmarshal(body, parsed); err != nil || len(parsed.SupportedInterfaces) == 0 {
		if parsed, err = a2av0.NewAgentCardParser()(body); err != nil {
			return nil, fmt.Errorf("the agent card is not one: %w", err)
		}
	}
	if len(parsed.SupportedInterfaces) == 0 && legacy {
		var old struct {
			URL             string `json:"url"`
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(body, &old) == nil && old.URL != "" {
			v := a2a.ProtocolVersion(old.ProtocolVersion)
			if v == "" {
				v = a2av0.Version
			}
			parsed.SupportedInterfaces = []*a2a.AgentInterface{{URL: old.URL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: v}}
		}
	}
	return &card{AgentCard: parsed}, nil
}

// pickInterface is the interface calls use: A2A 1.0 over JSON-RPC first, 0.3 over JSON-RPC
// next (the transports this client speaks). One on another origin than the configured URL
// is refused: the headers (Secrets) go only where the Agent's writer pointed them.
func pickInterface(c *a2a.AgentCard, base *url.URL) (*a2a.AgentInterface, error) {
	var best *a2a.AgentInterface
	for _, i := range c.SupportedInterfaces {
		if !strings.EqualFold(string(i.ProtocolBinding), string(a2a.TransportProtocolJSONRPC)) {
			continue
		}
		switch {
		case isV1(i.ProtocolVersion):
			if best == nil || !isV1(best.ProtocolVersion) {
				best = i
			}
		case isV03(i.ProtocolVersion):
			if best == nil {
				best = i
			}
		}
	}
	if best == nil {
		return nil, errors.New("the agent card offers no JSON-RPC interface of A2A 1.0 or 0.3, the ones this client speaks")
	}
	u, err := url.Parse(best.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the agent card's url %q is not a URL", best.URL)
	}
	if !mcptools.SameOrigin(u, base) {
		return nil, &refusal{reason: mcptools.ReasonOriginRefused,
			err: fmt.Errorf("the agent card names an endpoint on another origin (%s): refused", u.Host)}
	}
	return best, nil
}

// versionOf is the protocol version status reports: 1.0 or 0.3.
func versionOf(i *a2a.AgentInterface) string {
	if isV1(i.ProtocolVersion) {
		return string(a2a.Version)
	}
	return string(a2av0.Version)
}

func isV1(v a2a.ProtocolVersion) bool {
	return v == a2a.Version || strings.HasPrefix(string(v), string(a2a.Version)+".")
}

func isV03(v a2a.ProtocolVersion) bool {
	return v == a2av0.Version || strings.HasPrefix(string(v), string(a2av0.Version)+".")
}

// description is what the model reads about a remote agent: its card's name, description
// and skills.
func description(name string, card *a2a.AgentCard) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Send a message to the remote A2A agent %s (%s) and get its answer.", name, card.Name)
	if card.Description != "" {
		b.WriteString(" " + card.Description)
	}
	for _, s := range card.Skills {
		b.WriteString(" Skill " + s.Name + ": " + s.Description)
	}
	return textutil.Truncate(b.String(), mcptools.MaxDescriptionBytes)
}

// refusal is a configuration the operator refuses, with the reason status reports.
type refusal struct {
	reason string
	err    error
}

func (r *refusal) Error() string { return r.err.Error() }

// reasonOf is the status reason of a remote whose card was not read.
func reasonOf(err error) string {
	if r, ok := err.(*refusal); ok {
		return r.reason
	}
	return mcptools.ReasonUnreachable
}
