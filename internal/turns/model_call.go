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

	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// callModel is the one way the engine calls a model, whatever the call is for (a turn of
// the tool loop, a compaction step, any summary): the engine's budget gate judges the call
// before it is made and is charged what it received after, answered or not. Nothing else in
// the engine calls a provider; TestEveryModelCallIsJudged enumerates the calls.
func (t *turn) callModel(ctx context.Context, purpose budget.Purpose, req provider.Request) (*provider.Response, error) {
	gate := t.e.opts.Budget
	if gate == nil {
		return t.prov.Complete(ctx, req)
	}
	if err := t.recordBudgetDecisions(ctx); err != nil {
		return nil, err
	}
	call := t.budgetCall(purpose)
	if err := gate.Judge(ctx, call); err != nil {
		return nil, t.askForBudget(ctx, err)
	}
	resp, err := t.prov.Complete(ctx, req)
	gate.Charge(ctx, call, t.received(resp))
	return resp, err
}

// budgetCall is the turn's model call as the budget gate sees it.
func (t *turn) budgetCall(purpose budget.Purpose) budget.Call {
	o := t.req.Owner
	return budget.Call{Namespace: t.req.Namespace, Turn: t.req.ID, OwnerKind: o.Kind, Owner: o.NamespacedName,
		OwnerUID: OwnerUIDOf(t.req.ID), Purpose: purpose, Currency: t.currency()}
}

// received is what a model call's answer used, priced with the turn's Agent's pricing
// (nothing for a call that failed).
func (t *turn) received(resp *provider.Response) usage.Turn {
	if resp == nil {
		return usage.Turn{}
	}
	u := resp.Usage
	priced, err := usage.Price(t.agent.Spec.Model.Pricing, u.InputTokens, u.OutputTokens, u.CachedInputTokens)
	if err != nil { // validated at admission: one that does not parse leaves the call unpriced
		return usage.Turn{Input: u.InputTokens, Output: u.OutputTokens, CachedInput: u.CachedInputTokens}
	}
	return priced
}

// embeddingsGate is the budget gate of a recall's embeddings call in this turn: judged
// before, charged after, like a model call (PurposeEmbedding); nil without budgets.
func (t *turn) embeddingsGate() sessiontools.EmbeddingsGate {
	if t.e.opts.Budget == nil {
		return nil
	}
	return embeddingsGate{gate: t.e.opts.Budget, call: t.budgetCall(budget.PurposeEmbedding)}
}

type embeddingsGate struct {
	gate budget.Gate
	call budget.Call
}

func (g embeddingsGate) Judge(ctx context.Context) error { return g.gate.Judge(ctx, g.call) }

// Charge counts the tokens embedded; an Agent's pricing prices model calls, not embeddings.
func (g embeddingsGate) Charge(ctx context.Context, tokens int64) {
	g.gate.Charge(ctx, g.call, usage.Turn{Input: tokens})
}
