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
// field indexes must be registered first (indexer.Setup).
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	r := mgr.GetClient()
	return errors.Join(
		ctrl.NewWebhookManagedBy(mgr, &v1.SessionSend{}).WithValidator(&SessionSendValidator{Reader: r}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &v1.SubagentRun{}).WithValidator(&SubagentRunValidator{Reader: r}).
			WithDefaulter(&SubagentRunDefaulter{}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &v1.AgentSession{}).WithValidator(&AgentSessionValidator{Reader: r, ManagerUsername: o.ManagerUsername}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &v1.SessionPolicy{}).WithValidator(&SessionPolicyValidator{}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &v1.Agent{}).WithValidator(&AgentValidator{}).Complete(),
	)
}
