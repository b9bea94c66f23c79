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

package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// A send whose turn a budget stopped ends as a cancel ends it (its running turns
// aborted, what its turns started cancelled), but Failed, with the reason BudgetExceeded.

// stopForBudget ends the send Failed (BudgetExceeded). A send that replied keeps status ok
// and its reply: the requester already has them.
func (r *SessionSendReconciler) stopForBudget(ctx context.Context, f *flow[*sessionsv1alpha1.SessionSend], why string) error {
	r.Runner.Abort(f.owner)
	if err := cancelStarted(ctx, r.Client, f.obj, ""); err != nil {
		return err
	}
	st := &f.obj.Status
	if st.Status == "" || st.Status == sessionsv1alpha1.SendAccepted {
		st.Status = sessionsv1alpha1.SendError
		setReplied(f.obj, metav1.ConditionFalse, "Error", why)
	}
	st.Error = textutil.Truncate(why, maxStatusText)
	f.event(corev1.EventTypeWarning, sessionsv1alpha1.ReasonBudgetExceeded, "%s", why)
	r.end(f, failed, sessionsv1alpha1.SendFailed, sessionsv1alpha1.ReasonBudgetExceeded, why)
	return nil
}
