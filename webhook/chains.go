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

package webhook

import (
	"context"
	"fmt"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// chains holds the limits on what agents' tools start: the hop count each tool-made object
// carries, the size of its chain and the pairs repeated in it, and the per-namespace rate
// of tool-made objects.
type chains struct {
	rate   *toolRate
	ledger *chainLedger
	// clock judges the deadlines of chains carried across the wire.
	clock clock.PassiveClock
	// doors counts the sends the doors made, the backstop for loops that carry no chain.
	doors *doorSends
	// defaultPerMinute is the operator's rate when the SessionPolicy sets none.
	defaultPerMinute int
}

// judgeChain returns a denial for an object over the limits of a chain it carried across
// the wire, over the hop limit or, when a session tool made it (it carries a hop count,
// which only the manager may set), over its chain's limits or the namespace's rate; else "". member is who asks whom. Call it last: it takes a rate
// token and records the object in its chain.
func (c chains) judgeChain(ctx context.Context, obj client.Object, member policy.ChainMember, p *sessionsv1alpha1.SessionPolicySpec) (string, error) {
	if why := c.judgeCarried(obj, p); why != "" {
		return why, nil
	}
	if why := c.judgeDoorSend(ctx, obj, member, p); why != "" {
		return why, nil
	}
	annotations := obj.GetAnnotations()
	if _, tool := annotations[sessionsv1alpha1.HopsAnnotation]; !tool {
		return "", nil
	}
	hops, err := policy.HopsOf(annotations)
	if err != nil {
		return err.Error(), nil
	}
	if why := policy.CheckHops(hops, p); why != "" {
		return why, nil
	}
	_, inChain := obj.GetLabels()[sessionsv1alpha1.ChainLabel]
	if inChain && c.ledger != nil {
		if why, err := c.ledger.admit(ctx, obj, member, p, !isDryRun(ctx)); why != "" || err != nil {
			return why, err
		}
	}
	if c.rate == nil || isDryRun(ctx) {
		return "", nil
	}
	perMinute := policy.ToolCreatesPerMinute(p, c.defaultPerMinute)
	if !c.rate.allow(obj.GetNamespace(), perMinute) {
		if inChain && c.ledger != nil {
			c.ledger.forget(obj)
		}
		return policy.RateDenial(perMinute), nil
	}
	return "", nil
}

func managerOnly(annotation string) string {
	return fmt.Sprintf("annotation %s is set only by the operator's session tools; remove it (a person's send or spawn starts a new chain)", annotation)
}

func managerOnlyLabel(label string) string {
	return fmt.Sprintf("label %s is set only by the operator's session tools; remove it (a person's send or spawn starts a new chain)", label)
}
