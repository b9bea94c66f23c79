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

package ownerflow

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// A turn whose tool call needs a person ends with TurnResult.AwaitingApproval (see
// internal/turns/approval_wait.go); its owner then waits here without holding a turn. The
// owner's controller watches its ToolApprovals (Owns), shows phase AwaitingApproval and the
// condition of that name while one is pending, and once it is decided forgets the waiting
// outcome and submits the same turn again, which resumes from its transcript. Expiry is
// the ToolApproval controller's (at expiresAt, or when the owner ends).

// awaitApproval says whether the owner's turn still waits on the ToolApproval name, and
// notes it for the status. A decided or missing approval ends the wait: the resumed turn
// reads the decision itself (a missing one it asked for counts as expired).
func (r *StepRunner[T]) awaitApproval(ctx context.Context, f *Flow[T], name string) (bool, error) {
	ta := &sessionsv1alpha1.ToolApproval{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: f.Obj.GetNamespace(), Name: name}, ta)
	if err == nil && ta.Status.Decided() && ta.Spec.IsBudget() {
		noteBudgetDecided(f, ta)
	}
	if apierrors.IsNotFound(err) || (err == nil && ta.Status.Decided()) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	f.awaiting = ta
	return true, nil
}

// setAwaiting keeps the AwaitingApproval condition: True naming the approval while one is
// pending, False once the wait is over; an owner that never waited gets none. It reports
// whether the owner waits, and queues an Event when the wait begins.
func setAwaiting[T TurnOwner](f *Flow[T], conds *[]metav1.Condition) bool {
	ta := f.awaiting
	was := meta.IsStatusConditionTrue(*conds, sessionsv1alpha1.ConditionAwaitingApproval)
	if ta == nil {
		if was {
			meta.SetStatusCondition(conds, metav1.Condition{Type: sessionsv1alpha1.ConditionAwaitingApproval, Status: metav1.ConditionFalse,
				Reason: "Decided", Message: "no tool call waits for approval"})
		}
		return false
	}
	what := "tool " + ta.Spec.Tool + " waits for approval"
	if ta.Spec.IsBudget() {
		what = "budget: " + ta.Spec.Budget.Message
	}
	msg := textutil.Truncate(what+": kubectl sessions approve "+ta.Name+" (or deny), until "+
		ta.Spec.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"), MaxConditionMessage)
	if c := meta.FindStatusCondition(*conds, sessionsv1alpha1.ConditionAwaitingApproval); !was || c.Message != msg {
		f.Event(corev1.EventTypeNormal, sessionsv1alpha1.ConditionAwaitingApproval, "%s", msg)
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: sessionsv1alpha1.ConditionAwaitingApproval, Status: metav1.ConditionTrue,
		Reason: "Pending", Message: msg})
	return true
}

// ShowAwaiting sets the condition and the phase: waiting while an approval is pending,
// back to running after (a later step sets its own phase).
func ShowAwaiting[T TurnOwner, P ~string](f *Flow[T], conds *[]metav1.Condition, phase *P, waiting, running P) {
	switch {
	case setAwaiting(f, conds):
		*phase = waiting
	case *phase == waiting:
		*phase = running
	}
}

// The Events of a budget's ask once decided: the owner goes on with more, or stops (its
// BudgetExceeded Event then says why).
const (
	ReasonBudgetApproved = "BudgetApproved"
	ReasonBudgetDenied   = "BudgetDenied"
)

// noteBudgetDecided queues the Event of a decided budget ask the owner waited on.
func noteBudgetDecided[T TurnOwner](f *Flow[T], ta *sessionsv1alpha1.ToolApproval) {
	b := ta.Spec.Budget
	switch ta.Status.Phase {
	case sessionsv1alpha1.ApprovalApproved:
		f.Event(corev1.EventTypeNormal, ReasonBudgetApproved, "%s approved %s more %s for %s/%s (toolapproval/%s)",
			textutil.Truncate(ta.Status.DecidedBy, 128), b.More, budgetUnit(b), b.BudgetOf.Kind, b.BudgetOf.Name, ta.Name)
	default:
		f.Event(corev1.EventTypeWarning, ReasonBudgetDenied, "no more %s for %s/%s: toolapproval/%s %s",
			budgetUnit(b), b.BudgetOf.Kind, b.BudgetOf.Name, ta.Name, strings.ToLower(string(ta.Status.Phase)))
	}
}

// budgetUnit is what a budget ask's amounts count: its currency for cost, else tokens or turns.
func budgetUnit(b *sessionsv1alpha1.BudgetApproval) string {
	if b.Resource == sessionsv1alpha1.BudgetCost && b.Currency != "" {
		return b.Currency
	}
	return string(b.Resource)
}
