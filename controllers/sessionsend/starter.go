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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// starter is the provenance of a send that a SessionSchedule's tick (cron) or a
// SessionHook's delivery (hook) created, or nil for any other send. The label names the
// starter, and the starter must exist and be the send's controller owner, as the schedule
// controller and the hook door make it: a label alone (a send made by hand where no webhook
// refused it, or one left by a deleted starter) makes an ordinary send. A send from a
// session is inter_session whatever its labels.
func (r *SessionSendReconciler) starter(ctx context.Context, send *sessionsv1alpha1.SessionSend) (*transcript.Provenance, error) {
	if send.Spec.FromSessionKey != "" {
		return nil, nil
	}
	var owner client.Object
	var prov *transcript.Provenance
	name := send.Labels[sessionsv1alpha1.ScheduleLabel]
	switch hook := send.Labels[sessionsv1alpha1.HookLabel]; {
	case name != "":
		owner, prov = &sessionsv1alpha1.SessionSchedule{}, &transcript.Provenance{Kind: transcript.ProvenanceCron, Schedule: name}
	case hook != "":
		name = hook
		owner, prov = &sessionsv1alpha1.SessionHook{}, &transcript.Provenance{Kind: transcript.ProvenanceHook, Hook: hook,
			DeliveryID: send.Annotations[sessionsv1alpha1.DeliveryIDAnnotation]}
	default:
		return nil, nil
	}
	found, err := r.Lookup.Get(ctx, send.Namespace, name, owner)
	if err != nil || !found || !metav1.IsControlledBy(send, owner) {
		return nil, err
	}
	return prov, nil
}
