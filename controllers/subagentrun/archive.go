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
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/types"
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
