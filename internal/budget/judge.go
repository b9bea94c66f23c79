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

package budget

import (
	"context"
	"strings"

	"k8s.io/klog/v2"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// Judge implements Gate: whether the call may be made, against its send's budget (or each
// run tree that holds its run) and the namespace's window. It reads the cache only and
// changes nothing. A turn's first call is judged as the turn it begins (maxTurns). An
// announce step's turn call is never refused: it is how the requester hears that a run
// stopped; its compaction call is.
func (l *Ledger) Judge(ctx context.Context, c Call) error {
	if c.Purpose != PurposeCompaction && c.Purpose != PurposeEmbedding && announceStep(c.Turn) {
		return nil
	}
	pol, err := l.policy(ctx, c.Namespace)
	if err != nil {
		return err
	}
	o := l.ownerOf(ctx, c)
	if why := l.judge(c, o, pol); why != "" {
		klog.FromContext(ctx).V(2).Info("model call refused by a budget", "turn", c.Turn, "purpose", c.Purpose, "why", why)
		return Exceeded(why)
	}
	return nil
}

// judge is why the call is over a budget: its owner's, a tree's that holds it, or the
// namespace's window; "" when it is not.
func (l *Ledger) judge(c Call, o *owner, pol *sessionsv1alpha1.SessionPolicy) string {
	b := budgetsOf(pol)
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var begins usage.Spent
	if _, counted := l.turns[c.Turn]; !counted {
		begins.Turns = 1
	}
	switch {
	case o == nil:
	case o.kind == OwnerSessionSend:
		if why := usage.Exceeded(o.limit(b.PerSend), o.spent.Plus(begins), "the send"); why != "" {
			return why
		}
	default:
		for _, r := range append([]*owner{o}, o.ancestors...) {
			whose := "the run tree of subagentrun/" + r.name.Name
			if why := usage.Exceeded(r.limit(b.PerRun), r.tree.Plus(begins), whose); why != "" {
				return why
			}
		}
	}
	if b.Namespace == nil {
		return ""
	}
	return usage.NamespaceSpent(b.Namespace, l.windowLocked(c.Namespace, b.Namespace, pol.Status.Spend, now).spent, now)
}

// announceStep: the turn is an announce step (a send's or a run's, cancelled or not).
func announceStep(turnID string) bool {
	_, step, _ := strings.Cut(turnID, "/")
	return strings.HasPrefix(step, "announce")
}
