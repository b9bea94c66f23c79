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

package policy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// The chain extension's names (docs/reference/chain-extension.md). On A2A the URI is
// declared in the card's capabilities.extensions, asked for with the A2A-Extensions header
// and keys the value in the message's metadata; on MCP the value is in the request's _meta
// under ChainMetaKey.
const (
	ChainExtensionURI = "https://sessions.agents.dev/extensions/chain/v1"
	ChainMetaKey      = "sessions.agents.dev/chain"
)

// Bounds of a carried chain: what a caller sends is read only this far.
const (
	// MaxCarriedBytes bounds the encoded value.
	MaxCarriedBytes = 2048
	// MaxCarriedVisited is how many pairs a chain carries, the newest kept: enough for the
	// second lap of any loop shorter than 16 hops, longer than maxHops' default allows.
	MaxCarriedVisited = 32
	maxCarriedHops    = 1000
	maxCarriedSends   = 1000000
)

// CarriedChain is what a send made by an agent's tool carries across the wire: its chain,
// the path that led to it and what is left of the budget above it. Every field can only
// narrow the receiver's own limits.
type CarriedChain struct {
	// ID names the chain at its origin (the root's UID there).
	ID string `json:"id"`
	// Hops is this send's hop in the chain: 1 for the first tool-made send.
	Hops int `json:"hops"`
	// Sends counts the chain's sends and spawns before this one on its path, the root included.
	Sends int `json:"sends"`
	// Visited are the path's requester-to-target pairs, hashed (PairHash), oldest first;
	// the last is this send's.
	Visited []string `json:"visited,omitempty"`
	// Budget is what is left of the tightest budget above this send (tokens, cost, turns).
	Budget *sessionsv1alpha1.Budget `json:"budget,omitempty"`
	// Deadline is when the chain's work is no longer wanted.
	Deadline *time.Time `json:"deadline,omitempty"`
	// Root names the chain's root where it began, as <Kind>/<name>, and Seal proves it was
	// that server which named it (SealRoot): the chain coming back there tells that root
	// which limit stopped it. Any other server ignores both.
	Root string `json:"root,omitempty"`
	Seal string `json:"seal,omitempty"`
}

// ParseCarried reads a carried chain, refusing anything outside the extension's bounds.
func ParseCarried(raw []byte) (*CarriedChain, error) {
	if len(raw) > MaxCarriedBytes {
		return nil, fmt.Errorf("the carried chain is larger than %d bytes", MaxCarriedBytes)
	}
	var c CarriedChain
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("the carried chain is not one: %w", err)
	}
	return &c, c.validate()
}

// CarriedFromValue reads a carried chain from a decoded JSON value (an A2A metadata entry
// or an MCP _meta entry); nil when v is nil.
func CarriedFromValue(v any) (*CarriedChain, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return ParseCarried(v)
	case map[string]any:
		if c, err := carriedFromMap(v); !errors.Is(err, errSlowPath) {
			return c, err
		}
	}
	return parseCarriedValue(v)
}

func (c *CarriedChain) validate() error {
	switch {
	case !carriedIDOK(c.ID):
		return errors.New("the carried chain's id must be 1 to 128 of A-Z a-z 0-9 . _ : -")
	case c.Hops < 1 || c.Hops > maxCarriedHops:
		return fmt.Errorf("the carried chain's hops must be 1 to %d", maxCarriedHops)
	case c.Sends < 1 || c.Sends > maxCarriedSends:
		return fmt.Errorf("the carried chain's sends must be 1 to %d", maxCarriedSends)
	case c.Root != "" && !carriedRootOK(c.Root):
		return errors.New("the carried chain's root must be SessionSend/<name> or SubagentRun/<name>")
	case c.Seal != "" && !lowerHexOK(c.Seal, 32):
		return errors.New("the carried chain's seal must be 32 lowercase hex digits")
	case len(c.Visited) > MaxCarriedVisited:
		return fmt.Errorf("the carried chain holds more than %d visited pairs", MaxCarriedVisited)
	}
	for _, p := range c.Visited {
		if !lowerHexOK(p, 16) {
			return errors.New("a visited pair of the carried chain is not 16 lowercase hex digits")
		}
	}
	if b := c.Budget; b != nil {
		if b.MaxCost != "" && !decimalOK(b.MaxCost) {
			return errors.New("the carried budget's maxCost is not a decimal")
		}
		if (b.MaxTokens != nil && *b.MaxTokens < 0) || (b.MaxTurns != nil && *b.MaxTurns < 0) {
			return errors.New("the carried budget's maxTokens and maxTurns may not be negative")
		}
	}
	return nil
}

// Encode is the chain as compact JSON, the annotation's and the wire's form.
func (c *CarriedChain) Encode() string {
	b, _ := json.Marshal(c) // a struct of plain fields always marshals
	return string(b)
}

// CarriedOf reads an object's CarriedChainAnnotation: nil without one.
func CarriedOf(annotations map[string]string) (*CarriedChain, error) {
	s, ok := annotations[sessionsv1alpha1.CarriedChainAnnotation]
	if !ok {
		return nil, nil
	}
	c, err := ParseCarried([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("annotation %s: %w", sessionsv1alpha1.CarriedChainAnnotation, err)
	}
	return c, nil
}

// SealRoot is the seal of a chain's id and root under key, a secret of the server where the
// chain began.
func SealRoot(key []byte, id, root string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "\x00" + root))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// RootSealed says whether c's root was named by the server that holds key.
func RootSealed(key []byte, c *CarriedChain) bool {
	return c != nil && c.Root != "" && hmac.Equal([]byte(c.Seal), []byte(SealRoot(key, c.ID, c.Root)))
}

// PairHash is a requester-to-target pair of a chain as the chain carries it: the first 64
// bits of SHA-256 over the chain id, from and to. Hashed so that the path tells a peer
// nothing of the sessions and URLs it went through; the same pair of one chain always
// hashes the same, which is all the pair limit needs.
func PairHash(chainID, from, to string) string {
	h := sha256.Sum256([]byte(chainID + "\x00" + from + "\x00" + to))
	return hex.EncodeToString(h[:8])
}

// NextCarried is what a send made now from a turn carries: in, the chain its owner carried
// (nil when the owner's chain began here), goes on with one more hop, send and pair;
// otherwise a chain named chainID begins, at hops (the owner's plus one). budget is what
// the send may spend: the caller's tightest, already narrowed by what in carried
// (usage.Narrow); deadline this side's (nil: none), of which the earlier with in's is
// carried on.
func NextCarried(in *CarriedChain, chainID string, hops int, from, to string, budget *sessionsv1alpha1.Budget, deadline *time.Time) *CarriedChain {
	next := &CarriedChain{ID: chainID, Hops: hops, Sends: hops, Budget: budget, Deadline: deadline}
	if in != nil {
		next.ID, next.Root, next.Seal = in.ID, in.Root, in.Seal
		next.Hops = max(hops, in.Hops+1)
		next.Sends = max(next.Hops, in.Sends+1)
		next.Visited = slices.Clone(in.Visited)
		next.Deadline = earlier(in.Deadline, deadline)
	}
	next.Visited = append(next.Visited, PairHash(next.ID, from, to))
	if n := len(next.Visited); n > MaxCarriedVisited {
		next.Visited = next.Visited[n-MaxCarriedVisited:]
	}
	return next
}

func earlier(a, b *time.Time) *time.Time {
	if a == nil || (b != nil && b.Before(*a)) {
		return b
	}
	return a
}

// Limits a carried chain is stopped by besides the chain limits.
const (
	LimitMaxHops       = "maxHops"
	LimitCarriedBudget = "budget"
	LimitDeadline      = "deadline"
)

// crossedWire ends every refusal of a carried chain: the model and the person reading it
// learn the loop went through another agent server (A2A or MCP), where the limits are the
// same but counted from what each hop carries.
const crossedWire = "; this chain crossed the wire (A2A or MCP between agent servers), and every hop counts toward it"

// JudgeCarried decides whether a send carrying c may be made under p's chain limits: its
// hop against maxHops, its path's sends against maxSendsPerChain, its pair against
// maxPairRepeats, what is left of its budget and its deadline. nil allows it. The same
// judgement runs on the sending side before the call and on the receiving side at the door.
func JudgeCarried(c *CarriedChain, p *sessionsv1alpha1.SessionPolicySpec, now time.Time) *ChainDenial {
	if c == nil {
		return nil
	}
	maxSends, maxPairs := chainLimits(p)
	if limit := MaxHops(p); c.Hops > limit {
		return &ChainDenial{Limit: LimitMaxHops, Message: fmt.Sprintf(
			"chain limit reached: this would be hop %d of the conversation chain (SessionPolicy spec.limits.maxHops is %d)%s; stop sending and spawning and answer with what you have",
			c.Hops, limit, crossedWire)}
	}
	if c.Sends >= maxSends {
		return &ChainDenial{Limit: LimitMaxSendsPerChain, Message: fmt.Sprintf(
			"chain limit reached: this conversation chain already made %d sends and spawns (SessionPolicy spec.limits.maxSendsPerChain is %d)%s; stop sending and spawning and answer with what you have",
			c.Sends, maxSends, crossedWire)}
	}
	if n := len(c.Visited); n > 0 {
		if repeats := countOf(c.Visited[:n-1], c.Visited[n-1]); repeats >= maxPairs {
			return &ChainDenial{Limit: LimitMaxPairRepeats, Message: fmt.Sprintf(
				"chain limit reached: this agent already sent to the same target %d times in this conversation chain (SessionPolicy spec.limits.maxPairRepeats is %d), so the agents are going round in a loop%s; stop sending and answer with what you have",
				repeats, maxPairs, crossedWire)}
		}
	}
	if c.Deadline != nil && !now.Before(*c.Deadline) {
		return &ChainDenial{Limit: LimitDeadline, Message: fmt.Sprintf(
			"chain limit reached: the chain's deadline %s has passed%s; answer with what you have", c.Deadline.UTC().Format(time.RFC3339), crossedWire)}
	}
	if why := carriedSpent(c.Budget); why != "" {
		return &ChainDenial{Limit: LimitCarriedBudget, Message: "budget exceeded: " + why + crossedWire + "; answer with what you have"}
	}
	return nil
}

// carriedSpent is why a carried budget has nothing left for one more send, or "".
func carriedSpent(b *sessionsv1alpha1.Budget) string {
	switch {
	case b == nil:
		return ""
	case b.MaxTurns != nil && *b.MaxTurns < 1:
		return "the budget above this chain has no turn left"
	case b.MaxTokens != nil && *b.MaxTokens < 1:
		return "the budget above this chain has no token left"
	case b.MaxCost != "" && strings.Trim(b.MaxCost, "0.") == "":
		// validate took only decimals: one of zeros and a point is zero.
		return "the budget above this chain has no cost left"
	}
	return ""
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// ChainBaggage is the chain as W3C baggage (its id and hop), for tracing systems that keep
// baggage beside traceparent; the extension's own value is what limits are judged on.
func ChainBaggage(c *CarriedChain) string {
	return fmt.Sprintf("sessions.agents.dev.chain=%s,sessions.agents.dev.hops=%d", c.ID, c.Hops)
}

var limitNamed = regexp.MustCompile(`SessionPolicy spec\.limits\.([A-Za-z]+) is`)

// CarriedRefusalLimit is the limit a refusal of JudgeCarried names, when text holds one;
// "" otherwise. Only the server that refused reads its own words with it (our /mcp, to mark
// the refusal in its result's _meta, RefusalMeta): a caller reads the mark, RefusedLimit.
func CarriedRefusalLimit(text string) string {
	if !strings.Contains(text, crossedWire) {
		return ""
	}
	if m := limitNamed.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	if strings.Contains(text, "deadline") {
		return LimitDeadline
	}
	return LimitCarriedBudget
}

// A server speaking the extension marks a tool result that refuses what the call carried:
// _meta[ChainMetaKey] = {"refused": {"limit": "maxPairRepeats"}}, the text beside it for
// people and models. The limit is one of the Limit* names.

// RefusalMeta is the _meta value under ChainMetaKey of a result refused at limit.
func RefusalMeta(limit string) map[string]any {
	return map[string]any{"refused": map[string]string{"limit": limit}}
}

// refusedLimits are the limits a refusal may name; any other is no refusal we know.
var refusedLimits = map[string]bool{LimitMaxHops: true, LimitCarriedBudget: true, LimitDeadline: true,
	LimitMaxSendsPerChain: true, LimitMaxPairRepeats: true}

// RefusedLimit is the limit a peer's result marks as refused in its _meta value under
// ChainMetaKey (v as decoded JSON, or raw JSON); "" when it marks none or one we do not
// know. The value comes from another server: it is bounded and checked, never trusted
// further than naming a known limit.
func RefusedLimit(v any) string {
	raw, ok := v.(json.RawMessage)
	if !ok {
		if v == nil {
			return ""
		}
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		raw = b
	}
	if len(raw) > 1024 {
		return ""
	}
	var m struct {
		Refused *struct {
			Limit string `json:"limit"`
		} `json:"refused"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Refused == nil || !refusedLimits[m.Refused.Limit] {
		return ""
	}
	return m.Refused.Limit
}
