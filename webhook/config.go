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
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// +kubebuilder:webhook:path=/validate-sessions-agents-dev-v1alpha1-sessionpolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=sessionpolicies,verbs=create;update,versions=v1alpha1,name=vsessionpolicy.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:webhook:path=/validate-sessions-agents-dev-v1alpha1-agent,mutating=false,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=agents,verbs=create;update,versions=v1alpha1,name=vagent.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5

// SessionPolicyValidator checks what the schema cannot: globs compile, channels are
// lower-case tokens as keys hold them.
type SessionPolicyValidator struct{}

var _ admission.Validator[*sessionsv1alpha1.SessionPolicy] = &SessionPolicyValidator{}

func (v *SessionPolicyValidator) validate(p *sessionsv1alpha1.SessionPolicy) (admission.Warnings, error) {
	var errs field.ErrorList
	allow := field.NewPath("spec", "agentToAgent", "allow")
	for i, g := range p.Spec.AgentToAgent.Allow {
		if err := policy.ValidateGlob(g); err != nil {
			errs = append(errs, field.Invalid(allow.Index(i), g, err.Error()))
		}
	}
	errs = append(errs, policy.ValidateApprovalPolicy(p.Spec.ToolApproval, field.NewPath("spec", "toolApproval"))...)
	var warnings admission.Warnings
	if len(p.Spec.AgentToAgent.Allow) > 0 && !p.Spec.AgentToAgent.Enabled {
		warnings = append(warnings, "spec.agentToAgent.allow has no effect while spec.agentToAgent.enabled is false")
	}
	if len(errs) > 0 {
		return warnings, invalid("SessionPolicy", p.Name, errs...)
	}
	return warnings, nil
}

// ValidateCreate implements admission.Validator.
func (v *SessionPolicyValidator) ValidateCreate(_ context.Context, p *sessionsv1alpha1.SessionPolicy) (admission.Warnings, error) {
	return v.validate(p)
}

// ValidateUpdate implements admission.Validator.
func (v *SessionPolicyValidator) ValidateUpdate(_ context.Context, _, p *sessionsv1alpha1.SessionPolicy) (admission.Warnings, error) {
	return v.validate(p)
}

// ValidateDelete implements admission.Validator.
func (v *SessionPolicyValidator) ValidateDelete(context.Context, *sessionsv1alpha1.SessionPolicy) (admission.Warnings, error) {
	return nil, nil
}

// AgentValidator checks what the schema cannot: allowAgents are agent ids or "*", and the
// script's expressions compile.
type AgentValidator struct{}

var _ admission.Validator[*sessionsv1alpha1.Agent] = &AgentValidator{}

func (v *AgentValidator) validate(a *sessionsv1alpha1.Agent) (admission.Warnings, error) {
	var errs field.ErrorList
	allow := field.NewPath("spec", "subagents", "allowAgents")
	for i, id := range a.Spec.Subagents.AllowAgents {
		if id != "*" && !sessionkey.ValidAgentID(id) {
			errs = append(errs, field.Invalid(allow.Index(i), id, `must be "*" or an agent id ([a-z0-9][a-z0-9_-]{0,63})`))
		}
	}
	script := field.NewPath("spec", "model", "script")
	for i, r := range a.Spec.Model.Script {
		if err := policy.ValidateRegexp(r.Match); err != nil {
			errs = append(errs, field.Invalid(script.Index(i).Child("match"), r.Match, err.Error()))
		}
	}
	errs = append(errs, policy.ValidateApprovalPolicy(a.Spec.Tools.Approval, field.NewPath("spec", "tools", "approval"))...)
	if len(errs) > 0 {
		return nil, invalid("Agent", a.Name, errs...)
	}
	return nil, nil
}

// ValidateCreate implements admission.Validator.
func (v *AgentValidator) ValidateCreate(_ context.Context, a *sessionsv1alpha1.Agent) (admission.Warnings, error) {
	return v.validate(a)
}

// ValidateUpdate implements admission.Validator.
func (v *AgentValidator) ValidateUpdate(_ context.Context, _, a *sessionsv1alpha1.Agent) (admission.Warnings, error) {
	return v.validate(a)
}

// ValidateDelete implements admission.Validator.
func (v *AgentValidator) ValidateDelete(context.Context, *sessionsv1alpha1.Agent) (admission.Warnings, error) {
	return nil, nil
}
