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

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/indexer"
)

// DefaultArchiveAfter is the seeds' sub-agent archive TTL.
const DefaultArchiveAfter = 60 * time.Minute

// archiveAfter is the kept child's TTL: the SessionPolicy's, else the Agent's, else 60m.
func archiveAfter(p *v1.SessionPolicy, agent *v1.Agent) time.Duration {
	if p != nil && p.Spec.ArchiveAfterMinutes != nil {
		return time.Duration(*p.Spec.ArchiveAfterMinutes) * time.Minute
	}
	if agent != nil && agent.Spec.Subagents.ArchiveAfterMinutes != nil {
		return time.Duration(*agent.Spec.Subagents.ArchiveAfterMinutes) * time.Minute
	}
	return DefaultArchiveAfter
}

// archiveWhenDue archives a completed run's kept child once status.archiveAt has passed,
// and asks to be woken then otherwise.
func (r *SubagentRunReconciler) archiveWhenDue(ctx context.Context, run *v1.SubagentRun) (ctrl.Result, error) {
	at := run.Status.ArchiveAt
	if at == nil || run.Status.ChildSessionKey == "" {
		return ctrl.Result{}, nil
	}
	if left := at.Sub(r.Clock.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	child, err := indexer.SessionByKey(ctx, r.Client, run.Namespace, run.Status.ChildSessionKey)
	if err != nil || child == nil || child.Status.Phase == v1.SessionArchived {
		return ctrl.Result{}, err
	}
	// The AgentSession controller archives the transcript when it sees the phase.
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"phase": v1.SessionArchived, "archiveAt": at}})
	if err := r.Status().Patch(ctx, child, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.event(run, "Normal", "Archived", "child session %s archived after its TTL", child.Spec.Key)
	return ctrl.Result{}, nil
}
