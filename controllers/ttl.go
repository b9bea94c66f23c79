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
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// DefaultArchiveAfter is the seeds' sub-agent archive TTL.
const DefaultArchiveAfter = 60 * time.Minute

// archiveAfter is the kept child's TTL: the SessionPolicy's, else the Agent's, else 60m.
func archiveAfter(p *sessionsv1alpha1.SessionPolicy, agent *sessionsv1alpha1.Agent) time.Duration {
	if p != nil && p.Spec.ArchiveAfterMinutes != nil {
		return time.Duration(*p.Spec.ArchiveAfterMinutes) * time.Minute
	}
	if agent != nil && agent.Spec.Subagents.ArchiveAfterMinutes != nil {
		return time.Duration(*agent.Spec.Subagents.ArchiveAfterMinutes) * time.Minute
	}
	return DefaultArchiveAfter
}

// askToArchive puts the archive time on a kept child session; the AgentSession controller
// archives it then. The run does not write another kind's status.
func askToArchive(ctx context.Context, c client.Client, child *sessionsv1alpha1.AgentSession, at time.Time) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		sessionsv1alpha1.ArchiveAtAnnotation: at.UTC().Format(time.RFC3339)}}})
	return client.IgnoreNotFound(c.Patch(ctx, child, client.RawPatch(types.MergePatchType, patch)))
}

// archiveDue reads a session's archive-at annotation: whether it is due at now, and if not,
// how long is left (0 when none is set or it does not parse).
func archiveDue(s *sessionsv1alpha1.AgentSession, now time.Time) (due bool, left time.Duration) {
	v, ok := s.Annotations[sessionsv1alpha1.ArchiveAtAnnotation]
	if !ok {
		return false, 0
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return false, 0
	}
	if left = at.Sub(now); left > 0 {
		return false, left
	}
	return true, 0
}

// ttlLeft is how long a finished object has to live: its ttlSecondsAfterFinished (else the
// operator default; 0 there keeps it) from when it finished, and never before notBefore (a
// kept child's archive). keep is true when the object is never deleted.
func ttlLeft(spec *int32, def time.Duration, finishedAt, notBefore *metav1.Time, now time.Time) (left time.Duration, keep bool) {
	ttl := def
	if spec != nil {
		ttl = time.Duration(*spec) * time.Second
	} else if def <= 0 {
		return 0, true
	}
	if finishedAt == nil {
		return 0, true
	}
	end := finishedAt.Add(ttl)
	if notBefore != nil && notBefore.After(end) {
		end = notBefore.Time
	}
	return max(end.Sub(now), 0), false
}

// deleteAfterTTL deletes a finished object once its TTL has passed and asks to be woken then
// otherwise. Dependents are orphaned: a run's kept (archived) child session stays.
func deleteAfterTTL(ctx context.Context, c client.Client, clk clock.Clock, obj client.Object, spec *int32, def time.Duration,
	finishedAt, notBefore *metav1.Time) (ctrl.Result, error) {
	left, keep := ttlLeft(spec, def, finishedAt, notBefore, clk.Now())
	switch {
	case keep:
		return ctrl.Result{}, nil
	case left > 0:
		return ctrl.Result{RequeueAfter: left}, nil
	}
	uid := obj.GetUID()
	err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationOrphan))
	if client.IgnoreNotFound(err) == nil {
		ctrl.LoggerFrom(ctx).V(2).Info("deleted after its TTL")
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}
