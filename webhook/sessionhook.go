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

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// +kubebuilder:webhook:path=/mutate-sessions-agents-dev-v1alpha1-sessionhook,mutating=true,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=sessionhooks,verbs=create;update,versions=v1alpha1,name=msessionhook.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5,reinvocationPolicy=IfNeeded
// +kubebuilder:webhook:path=/validate-sessions-agents-dev-v1alpha1-sessionhook,mutating=false,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=sessionhooks,verbs=create;update,versions=v1alpha1,name=vsessionhook.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5

// HookSecrets vouches for a SessionHook's signing Secret, as AgentSecrets does for an
// Agent's: the transcript-store reads it only when the hook's writer may get it, or it
// opted in.
type HookSecrets struct{ secretGate }

var _ admission.Defaulter[*sessionsv1alpha1.SessionHook] = &HookSecrets{}

// Default implements admission.Defaulter.
func (d *HookSecrets) Default(ctx context.Context, h *sessionsv1alpha1.SessionHook) error {
	return d.vouch(ctx, "sessionhooks", h, policy.HookSecretRefs(h))
}

// SessionHookValidator refuses a hook whose writer may not start sends into its session
// (starters) and a session key that is not one.
type SessionHookValidator struct{ starters }

// Validate judges a hook on create and on each spec change.
func (v *SessionHookValidator) Validate(ctx context.Context, h *sessionsv1alpha1.SessionHook) error {
	if fe := startKey(field.NewPath("spec", "sessionKey"), h.Spec.SessionKey, h.Spec.AgentID); fe != nil {
		return invalid("SessionHook", h.Name, fe)
	}
	return v.judge(ctx, "sessionhooks", h.Name, h.Namespace, h.Spec.SessionKey)
}
