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

package agentsession

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// compactWhenAsked runs the compaction step a session's compact-request annotation asks
// for (kubectl sessions compact) as a turn in the session's lane, so it never overlaps a
// turn of the session, and removes the annotation once the step ended. The step's turn id
// is derived from the annotation's value: asked again after a restart, the engine finds the
// record the first run made instead of compacting twice.
func (r *AgentSessionReconciler) compactWhenAsked(ctx context.Context, s *sessionsv1alpha1.AgentSession) error {
	ask := s.Annotations[sessionsv1alpha1.CompactRequestAnnotation]
	if ask == "" || r.Runner == nil || s.Status.SessionID == "" || s.Status.Phase == sessionsv1alpha1.SessionArchived {
		return nil
	}
	owner := turns.Owner{Kind: turns.OwnerAgentSession, NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}}
	sum := sha256.Sum256([]byte(ask))
	id := turns.TurnID(s.UID, "compact-"+hex.EncodeToString(sum[:8]))
	res, done := r.Runner.Result(owner, id)
	if !done {
		agent, err := lookup.New(r.Client, nil).Agent(ctx, s.Namespace, s.Spec.AgentID)
		if err != nil {
			return err
		}
		if agent == nil {
			return fmt.Errorf("compaction asked of session %s: no Agent %q", s.Spec.Key, s.Spec.AgentID)
		}
		return r.Runner.Submit(ctx, turns.TurnRequest{ID: id, Namespace: s.Namespace, SessionKey: s.Spec.Key,
			Session: s.DeepCopy(), Agent: agent, Owner: owner, Compact: true})
	}
	// A copy: s carries this reconcile's status changes, which the patch's answer would undo.
	obj := s.DeepCopy()
	delete(obj.Annotations, sessionsv1alpha1.CompactRequestAnnotation)
	if err := r.Patch(ctx, obj, client.MergeFrom(s)); err != nil {
		return err
	}
	r.Runner.Abort(owner)
	switch {
	case res.Compacted:
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "Compacted", "Compact", "compacted as %s asked", sessionsv1alpha1.CompactRequestAnnotation)
	case res.Err == nil:
		// The engine recorded CompactionFailed, or there was nothing old enough to fold.
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "NotCompacted", "Compact", "no compaction record made; see earlier Events")
	}
	return nil
}
