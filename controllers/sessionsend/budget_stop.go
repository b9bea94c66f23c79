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

package sessionsend

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// A send whose turn a budget stopped ends as a cancel ends it (its running turns
// aborted, what its turns started cancelled), but Failed, with the reason BudgetExceeded.

// stopForBudget ends the send Failed (BudgetExceeded). A send that replied keeps status ok
// and its reply: the requester already has them.
func (r *SessionSendReconciler) stopForBudget(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SessionSend], why string) error {
	r.Runner.Abort(f.Owner)
	if err := ownerflow.CancelStarted(ctx, r.Client, f.Obj, ""); err != nil {
		return err
	}
	st := &f.Obj.Status
	if st.Status == "" || st.Status == sessionsv1alpha1.SendAccepted {
		st.Status = sessionsv1alpha1.SendError
		setReplied(f.Obj, metav1.ConditionFalse, "Error", why)
	}
	st.Error = textutil.Truncate(why, ownerflow.MaxStatusText)
	f.Event(corev1.EventTypeWarning, sessionsv1alpha1.ReasonBudgetExceeded, "%s", why)
	r.end(f, ownerflow.Failed, sessionsv1alpha1.SendFailed, sessionsv1alpha1.ReasonBudgetExceeded, why)
	return nil
}
