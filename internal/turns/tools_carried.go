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

package turns

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// carried is what a call of the turn's A2A or MCP tool carries to the agent server it
// reaches, to (the chain extension, docs/reference/chain-extension.md): the turn's chain
// one hop further, the pair from this session to to, what is left of the budgets above the
// turn. With judge, it also says whether the chain may go on from here; A2A calls are
// judged before they leave (they reach an agent by definition), MCP calls only carry (an
// MCP tool may be anything; a server of ours judges what it receives).
func (c *toolCall) carried(ctx context.Context, to string, judge bool) (*policy.CarriedChain, *policy.ChainDenial, error) {
	o, err := c.owner(ctx)
	if err != nil {
		return nil, nil, err
	}
	in, _ := policy.CarriedOf(o.annotations) // a malformed one was refused at admission
	chainID, root := o.labels[sessionsv1alpha1.ChainLabel], o.annotations[sessionsv1alpha1.ChainRootAnnotation]
	if chainID == "" && o.uid != "" {
		chainID, root = o.uid, c.req.Owner.Kind+"/"+c.req.Owner.Name
	}
	if chainID == "" {
		chainID, root = string(c.session.UID), ""
	}
	var remaining *sessionsv1alpha1.Budget
	if g := c.e.opts.Budget; g != nil {
		remaining = g.Remaining(ctx, c.budgetCall(budget.PurposeTurn))
	}
	if in != nil {
		remaining = usage.Narrow(in.Budget, remaining)
	}
	next := policy.NextCarried(in, chainID, policy.NextHops(o.annotations), c.from(), to, remaining, nil)
	if in == nil && root != "" {
		next.Root, next.Seal = root, policy.SealRoot(c.e.rootKey, chainID, root)
	}
	if !judge {
		return next, nil, nil
	}
	p, err := lookup.Lookup{Cache: c.e.opts.Reader}.SessionPolicy(ctx, c.req.Namespace)
	if err != nil {
		return nil, nil, err
	}
	var spec *sessionsv1alpha1.SessionPolicySpec
	if p != nil {
		spec = &p.Spec
	}
	d := policy.JudgeCarried(next, spec, c.e.now())
	if d != nil {
		c.warnChainRoot(ctx, next, d.Limit)
	}
	return next, d, nil
}

// warnChainRoot records on the chain's root the Warning Event ChainLimitReached, as the
// webhook does for a chain that stays here: the root the chain names when this manager
// sealed it (the chain began here and came back) and it is still here with the chain's
// UID (read from the API server: the cache drops finished sends), else the local start of
// the chain, the turn's owner. Only the
// sender tells its root, when it refuses a call or a server refuses what the call carried:
// a receiver cannot trust the root a caller names.
func (c *toolCall) warnChainRoot(ctx context.Context, chain *policy.CarriedChain, limit string) {
	r := c.e.opts.Recorder
	if r == nil || chain == nil {
		return
	}
	kind, name, uid := c.req.Owner.Kind, c.req.Owner.Name, OwnerUIDOf(c.req.ID)
	if k, n, ok := strings.Cut(chain.Root, "/"); ok && policy.RootSealed(c.e.rootKey, chain) {
		root := chainObject(k, metav1.ObjectMeta{})
		if root != nil && c.e.opts.APIReader.Get(ctx, client.ObjectKey{Namespace: c.req.Namespace, Name: n}, root) == nil &&
			string(root.GetUID()) == chain.ID {
			kind, name, uid = k, n, root.GetUID()
		}
	}
	obj := chainObject(kind, metav1.ObjectMeta{Namespace: c.req.Namespace, Name: name, UID: uid})
	if obj == nil || uid == "" {
		return
	}
	r.Eventf(obj, nil, corev1.EventTypeWarning, "ChainLimitReached", "CallRemote",
		"the chain of agent tool calls started by this %s reached SessionPolicy spec.limits.%s across the wire (A2A or MCP); its further calls are refused", kind, limit)
}

// chainObject is an empty SessionSend or SubagentRun with meta, nil for another kind.
func chainObject(kind string, meta metav1.ObjectMeta) client.Object {
	switch kind {
	case OwnerSessionSend:
		return &sessionsv1alpha1.SessionSend{ObjectMeta: meta}
	case OwnerSubagentRun:
		return &sessionsv1alpha1.SubagentRun{ObjectMeta: meta}
	}
	return nil
}
