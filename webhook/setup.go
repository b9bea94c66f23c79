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

// Package webhook holds the admission webhooks, one file per kind. They gather inputs from
// the manager's cache and format the answer; every decision comes from internal/policy.
package webhook

import (
	"errors"

	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Options configure the webhooks.
type Options struct {
	// ManagerUsername is the manager's own user (its ServiceAccount), the only one that may
	// set or change an AgentSession's spec.spawnedBy; empty lets nobody.
	ManagerUsername string
}

// SetupWithManager registers every webhook with the manager's webhook server. The cache's
// field indexes must be registered first (cacheindex.Setup).
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	r, api := mgr.GetClient(), mgr.GetAPIReader()
	return errors.Join(
		ctrl.NewWebhookManagedBy(mgr, &v1.SessionSend{}).WithValidator(withLog[*v1.SessionSend]("sessionSend", &SessionSendValidator{Reader: r, APIReader: api})).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &v1.SubagentRun{}).WithValidator(withLog[*v1.SubagentRun]("subagentRun", &SubagentRunValidator{Reader: r, APIReader: api})).
			WithDefaulter(&SubagentRunDefaulter{}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &v1.AgentSession{}).WithValidator(withLog[*v1.AgentSession]("agentSession", &AgentSessionValidator{Reader: r, ManagerUsername: o.ManagerUsername})).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &v1.SessionPolicy{}).WithValidator(withLog[*v1.SessionPolicy]("sessionPolicy", &SessionPolicyValidator{})).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &v1.Agent{}).WithValidator(withLog[*v1.Agent]("agent", &AgentValidator{})).Complete(),
	)
}
