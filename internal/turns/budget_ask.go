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
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
)

// A turn whose model call reaches a budget that asks (SessionPolicy perSend or perRun with
// onExceeded: Ask) waits the way a tool call that needs approval waits (approval_wait.go):
// it makes the ToolApproval of kind Budget the ledger named, through the same approval
// desk, and ends with TurnResult.AwaitingApproval. Its owner shows AwaitingApproval and,
// once a person decided, submits the same turn again, which replays its records and
// reaches the same model call: approved, the ledger counts the approval's allowance and
// the call is made; denied or expired, the ledger refuses it as a budget stop.

// askForBudget turns a judge's answer into the turn's: an *budget.AskError becomes a wait
// on its ToolApproval (made when there is none); any other error is returned as it is.
func (t *turn) askForBudget(ctx context.Context, err error) error {
	var ask *budget.AskError
	if !errors.As(err, &ask) {
		return err
	}
	if t.e.approvals == nil {
		return budget.Exceeded(err.Error())
	}
	ta, ferr := t.approval(ctx, ask.Name)
	if ferr != nil {
		return ferr
	}
	if ta == nil {
		if ta, ferr = t.e.approvals.Ask(ctx, t.budgetApproval(ask)); ferr != nil {
			return ferr
		}
	}
	if !ta.Status.Decided() && ta.Spec.Budget != nil {
		t.queueApprovalRecord(t.budgetKey(ta.Name)+askedSuffix, nil, fmt.Sprintf("budget approval asked: %s (ToolApproval %s, expires %s)",
			ta.Spec.Budget.Message, ta.Name, ta.Spec.ExpiresAt.UTC().Format(time.RFC3339)))
	}
	// Decided but not yet counted by the judge (its cache is behind): the owner sees the
	// decision and submits the turn again at once.
	return &awaitingApproval{name: ta.Name}
}

// budgetKey is the key of a budget ask's records in the turn, before their suffix: a turn
// may ask about more than one budget, each once.
func (t *turn) budgetKey(name string) string { return t.req.ID + "/budget/" + name }

// recordBudgetDecisions records, once each and before the model call they were asked at
// is judged again, how the turn's budget asks were decided: by whom, when and why, as a
// tool call's approval is recorded. An ask still open, or none, records nothing.
func (t *turn) recordBudgetDecisions(ctx context.Context) error {
	prefix := t.budgetKey("")
	var asked []string
	for k := range t.win.Done {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if name, ok := strings.CutSuffix(rest, askedSuffix); ok {
				asked = append(asked, name)
			}
		}
	}
	slices.Sort(asked)
	for _, name := range asked {
		if _, ok := t.win.Done[t.budgetKey(name)+decidedSuffix]; ok {
			continue
		}
		ta, err := t.approval(ctx, name)
		if err != nil {
			return err
		}
		phase, by, reason := sessionsv1alpha1.ApprovalExpired, "", "the ToolApproval "+name+" was deleted"
		if ta != nil {
			if !ta.Status.Decided() {
				continue
			}
			phase, by, reason = ta.Status.Phase, ta.Status.DecidedBy, ta.Spec.Reason
		}
		t.queueApprovalRecord(t.budgetKey(name)+decidedSuffix, nil, "budget "+decidedText(phase, by, reason, ta))
	}
	return nil
}

// budgetApproval is the ask's ToolApproval, owned by the turn's owner (deleted with it,
// expired when it ends) and labelled with the budget's holder, by which the ledger finds
// what was approved.
func (t *turn) budgetApproval(ask *budget.AskError) *sessionsv1alpha1.ToolApproval {
	o := t.req.Owner
	return &sessionsv1alpha1.ToolApproval{
		ObjectMeta: metav1.ObjectMeta{Name: ask.Name, Namespace: t.req.Namespace,
			Labels: map[string]string{sessionsv1alpha1.BudgetHolderLabel: string(ask.Holder)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: o.Kind, Name: o.Name,
				UID: OwnerUIDOf(t.req.ID), Controller: ptr.To(true)}}},
		Spec: sessionsv1alpha1.ToolApprovalSpec{Kind: sessionsv1alpha1.ApprovalKindBudget, SessionKey: t.session.Spec.Key,
			AgentID: t.session.Spec.AgentID, Budget: &ask.Approval, Owner: sessionsv1alpha1.ApprovalOwner{Kind: o.Kind, Name: o.Name},
			ExpiresAt: metav1.NewTime(t.e.now().Add(ask.Timeout).Truncate(time.Second))},
	}
}

// currency is the turn's Agent's pricing currency ("" unpriced): an ask about cost names it.
func (t *turn) currency() string {
	if t.agent == nil || t.agent.Spec.Model.Pricing == nil {
		return ""
	}
	return t.agent.Spec.Model.Pricing.Currency
}
