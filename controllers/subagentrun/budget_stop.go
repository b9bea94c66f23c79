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

package subagentrun

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// A run whose turn a budget stopped ends Failed, as budget_stop.go of sessionsend says.

// stopForBudget marks the run's task Failed by a budget (its notes say which) and cancels
// what its child session started; the announce (Status: budget exceeded) and the cleanup
// still run, and finish gives the Failed condition the reason BudgetExceeded.
func (r *SubagentRunReconciler) stopForBudget(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun], why string) error {
	st := &f.Obj.Status
	if err := ownerflow.CancelStarted(ctx, r.Client, f.Obj, st.ChildSessionKey); err != nil {
		return err
	}
	st.Phase, st.Notes = sessionsv1alpha1.RunFailed, textutil.Truncate(why, ownerflow.MaxErrorText)
	f.Event(corev1.EventTypeWarning, sessionsv1alpha1.ReasonBudgetExceeded, "%s", why)
	return nil
}

// budgetStopped: a budget stopped the run. Its Failed condition (reason BudgetExceeded) is
// written only by finish, after the announce, which must say so already (the condition
// would end the run for kubectl wait and the spawn limit before its announce): until then
// the run's failure is told by its notes, the ledger's reason (usage.StopReason).
func budgetStopped(st *sessionsv1alpha1.SubagentRunStatus) bool {
	return st.Phase == sessionsv1alpha1.RunFailed && usage.StopReason(st.Notes)
}
