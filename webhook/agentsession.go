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
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// +kubebuilder:webhook:path=/validate-sessions-agents-dev-v1alpha1-agentsession,mutating=false,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=agentsessions,verbs=create;update,versions=v1alpha1,name=vagentsession.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5

// AgentSessionValidator keeps keys well-formed and unique and spawnedBy the manager's.
type AgentSessionValidator struct {
	Reader          client.Reader
	ManagerUsername string
}

var _ admission.Validator[*v1.AgentSession] = &AgentSessionValidator{}

// ValidateCreate implements admission.Validator.
func (v *AgentSessionValidator) ValidateCreate(ctx context.Context, s *v1.AgentSession) (admission.Warnings, error) {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if sessionkey.IsReserved(s.Spec.Key) {
		errs = append(errs, field.Invalid(spec.Child("key"), s.Spec.Key, "global and unknown are reserved keys and never name a session"))
	} else if k, err := sessionkey.Parse(s.Spec.Key); err != nil {
		errs = append(errs, field.Invalid(spec.Child("key"), s.Spec.Key, err.Error()))
	} else if k.AgentID != "" && k.AgentID != s.Spec.AgentID {
		errs = append(errs, field.Invalid(spec.Child("agentId"), s.Spec.AgentID, fmt.Sprintf("the key belongs to agent %s", k.AgentID)))
	}
	if s.Spec.SpawnedBy != "" && !v.isManager(ctx) {
		errs = append(errs, field.Forbidden(spec.Child("spawnedBy"), "only the operator sets spawnedBy (sub-agent sessions come from SubagentRuns)"))
	}
	if len(errs) == 0 {
		other, err := lookup.SessionByKey(ctx, v.Reader, s.Namespace, s.Spec.Key)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if other != nil && other.Name != s.Name {
			errs = append(errs, field.Duplicate(spec.Child("key"), fmt.Sprintf("%s (AgentSession %s has it)", s.Spec.Key, other.Name)))
		}
	}
	if len(errs) > 0 {
		return nil, invalid("AgentSession", s.Name, errs...)
	}
	return nil, nil
}

// ValidateUpdate implements admission.Validator: the key is immutable (CRD rule) and
// spawnedBy changes only by the manager.
func (v *AgentSessionValidator) ValidateUpdate(ctx context.Context, old, s *v1.AgentSession) (admission.Warnings, error) {
	if old.Spec.SpawnedBy != s.Spec.SpawnedBy && !v.isManager(ctx) {
		return nil, invalid("AgentSession", s.Name, field.Forbidden(field.NewPath("spec", "spawnedBy"), "only the operator sets spawnedBy"))
	}
	return nil, nil
}

// ValidateDelete implements admission.Validator.
func (v *AgentSessionValidator) ValidateDelete(context.Context, *v1.AgentSession) (admission.Warnings, error) {
	return nil, nil
}

func (v *AgentSessionValidator) isManager(ctx context.Context) bool {
	req, err := admission.RequestFromContext(ctx)
	return err == nil && v.ManagerUsername != "" && req.UserInfo.Username == v.ManagerUsername
}
