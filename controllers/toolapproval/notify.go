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

package toolapproval

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// notifyApproval tells the session's channel that a tool call waits for a person
// (announce.Announcer.NotifyApproval); a delivery that failed is a Warning Event.
func (r *ToolApprovalReconciler) notifyApproval(ctx context.Context, ta *sessionsv1alpha1.ToolApproval) {
	if r.Announcer == nil {
		return
	}
	channel, err := r.Announcer.NotifyApproval(ctx, ta)
	if err != nil {
		ctrl.LoggerFrom(ctx).V(2).Info("approval request not delivered", "toolApproval", ta.Name, "error", err.Error())
		if r.Recorder != nil {
			r.Recorder.Eventf(ta, nil, corev1.EventTypeWarning, "NotifyFailed", "Deliver", "approval request to %s not delivered: %v", channel, err)
		}
	}
}
