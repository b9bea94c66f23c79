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

package webhook

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
)

// +kubebuilder:webhook:path=/mutate-sessions-agents-dev-v1alpha1-agentsession,mutating=true,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=agentsessions,verbs=create;update,versions=v1alpha1,name=magentsession.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:webhook:path=/mutate-sessions-agents-dev-v1alpha1-sessionsend,mutating=true,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=sessionsends,verbs=create;update,versions=v1alpha1,name=msessionsend.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5

// ShardLabel stamps shard.Label with the object's namespace's shard, on sessions and sends
// (runs: SubagentRunDefaulter), so that each shard's informers select only its namespaces;
// on updates too, so that no one takes an object out of its shard's cache. One shard labels
// nothing (the webhook is installed anyway: which install is sharded is the manager's flag).
type ShardLabel[T client.Object] struct{ Shard shard.Shard }

var (
	_ admission.Defaulter[*sessionsv1alpha1.AgentSession] = ShardLabel[*sessionsv1alpha1.AgentSession]{}
	_ admission.Defaulter[*sessionsv1alpha1.SessionSend]  = ShardLabel[*sessionsv1alpha1.SessionSend]{}
)

// Default implements admission.Defaulter.
func (d ShardLabel[T]) Default(_ context.Context, obj T) error {
	d.Shard.Stamp(obj)
	return nil
}
