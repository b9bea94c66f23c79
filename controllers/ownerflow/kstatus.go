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
	"k8s.io/klog/v2"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The conditions below are what GitOps tools read: sigs.k8s.io/cli-utils' kstatus (Flux)
// takes Reconciling=True as InProgress and Stalled=True as Failed before it looks at Ready,
// and the Argo CD health scripts in config/argocd read the same. Each is set in the status
// write its controller makes anyway: none costs an API write of its own.

// SetProgress sets the kstatus conditions of a send or run: Reconciling (with reason) while
// it works, Stalled (the Failed condition's reason and message) once it failed or timed out,
// neither once it completed or was cancelled. Like every condition of a send or run, they
// carry no observedGeneration of their own: status.observedGeneration, stamped in the same
// write, says which generation they reflect (kubectl wait and kstatus read it there).
func SetProgress(conds *[]metav1.Condition, reason, msg string) {
	if f := meta.FindStatusCondition(*conds, sessionsv1alpha1.ConditionFailed); f != nil && f.Status == metav1.ConditionTrue {
		meta.RemoveStatusCondition(conds, sessionsv1alpha1.ConditionReconciling)
		meta.SetStatusCondition(conds, metav1.Condition{Type: sessionsv1alpha1.ConditionStalled, Status: metav1.ConditionTrue,
			Reason: f.Reason, Message: f.Message})
		return
	}
	meta.RemoveStatusCondition(conds, sessionsv1alpha1.ConditionStalled)
	if sessionsv1alpha1.Finished(*conds) {
		meta.RemoveStatusCondition(conds, sessionsv1alpha1.ConditionReconciling)
		return
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: sessionsv1alpha1.ConditionReconciling, Status: metav1.ConditionTrue,
		Reason: reason, Message: textutil.Truncate(msg, MaxConditionMessage)})
}

// SetStalled mirrors a Ready condition that is False into Stalled=True (same reason and
// message), and drops Stalled once Ready is True: an Agent, SessionPolicy or session that
// is not Ready waits for a change (its spec, a Secret, the egress allow list), which
// retrying alone does not bring, so kstatus must not read it as InProgress forever.
func SetStalled(conds *[]metav1.Condition, ready metav1.Condition) bool {
	if ready.Status == metav1.ConditionTrue {
		return meta.RemoveStatusCondition(conds, sessionsv1alpha1.ConditionStalled)
	}
	return meta.SetStatusCondition(conds, metav1.Condition{Type: sessionsv1alpha1.ConditionStalled, Status: metav1.ConditionTrue,
		Reason: ready.Reason, Message: ready.Message, ObservedGeneration: ready.ObservedGeneration})
}

// SecretRecheck is how often an Agent or SessionPolicy waiting for a Secret looks again.
const SecretRecheck = 30 * time.Second

// ApplyReady sets the Ready condition (and Stalled) and observedGeneration in obj's status;
// the caller writes the status once (writeStatus).
func ApplyReady(ctx context.Context, obj client.Object, conds *[]metav1.Condition, observed *int64, cond metav1.Condition) {
	changed := meta.SetStatusCondition(conds, cond)
	if SetStalled(conds, cond) {
		changed = true
	}
	if *observed != obj.GetGeneration() {
		*observed, changed = obj.GetGeneration(), true
	}
	if changed {
		ctrl.LoggerFrom(ctx).V(2).Info("ready condition changed", "object", klog.KObj(obj), "ready", cond.Status, "reason", cond.Reason)
	}
}
