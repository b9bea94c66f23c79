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

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// +kubebuilder:webhook:path=/validate-sessions-agents-dev-v1alpha1-agentsession,mutating=false,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=agentsessions,verbs=create;update,versions=v1alpha1,name=vagentsession.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5

// AgentSessionValidator keeps keys well-formed and unique, agentId the key's agent,
// spawnedBy and un-sandboxing the manager's, sendPolicy its owners', and the routing fields
// the send policy judges (channel, chatType, lastChannel, lastTo, deliveryContext) the key's
// or their owners' (the relabelling rule).
type AgentSessionValidator struct {
	Reader client.Reader
	authz
}

var _ admission.Validator[*sessionsv1alpha1.AgentSession] = &AgentSessionValidator{}

// ValidateCreate implements admission.Validator.
func (v *AgentSessionValidator) ValidateCreate(ctx context.Context, s *sessionsv1alpha1.AgentSession) (admission.Warnings, error) {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if denial, err := v.judgeSendPolicy(ctx, "", s); err != nil || denial != "" {
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return nil, forbidden("agentsessions", s.Name, denial)
	}
	if sessionkey.IsReserved(s.Spec.Key) {
		errs = append(errs, field.Invalid(spec.Child("key"), s.Spec.Key, "global and unknown are reserved keys and never name a session"))
	} else if k, err := sessionkey.Parse(s.Spec.Key); err != nil {
		errs = append(errs, field.Invalid(spec.Child("key"), s.Spec.Key, err.Error()))
	} else {
		if k.AgentID != "" && k.AgentID != s.Spec.AgentID {
			errs = append(errs, field.Invalid(spec.Child("agentId"), s.Spec.AgentID, fmt.Sprintf("the key belongs to agent %s", k.AgentID)))
		}
		if k.Subagent && !v.isManager(ctx) {
			// A session made ahead under a pending run's child key would receive its task.
			errs = append(errs, field.Forbidden(spec.Child("key"), "sub-agent sessions are created only by the operator, for a SubagentRun; create a SubagentRun instead"))
		}
	}
	if s.Spec.SpawnedBy != "" && !v.isManager(ctx) {
		errs = append(errs, field.Forbidden(spec.Child("spawnedBy"), "only the operator sets spawnedBy (sub-agent sessions come from SubagentRuns)"))
	}
	restore, err := v.judgeRestoreFrom(ctx, s)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	errs = append(errs, restore...)
	relabel, err := v.judgeRelabel(ctx, nil, s)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	errs = append(errs, relabel...)
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

// ValidateUpdate implements admission.Validator: the key is immutable (CRD rule), agentId
// stays the key's agent, spawnedBy changes and un-sandboxing only by the manager, and a
// sendPolicy or routing-field change needs its own permission whatever the verb (update,
// patch, apply all arrive here as an update).
func (v *AgentSessionValidator) ValidateUpdate(ctx context.Context, old, s *sessionsv1alpha1.AgentSession) (admission.Warnings, error) {
	spec := field.NewPath("spec")
	if denial, err := v.judgeSendPolicy(ctx, old.Spec.SendPolicy, s); err != nil || denial != "" {
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return nil, forbidden("agentsessions", s.Name, denial)
	}
	var errs field.ErrorList
	if old.Spec.AgentID != s.Spec.AgentID {
		errs = append(errs, field.Forbidden(spec.Child("agentId"), fmt.Sprintf(
			"agentId is immutable (it decides the session's sandbox and visibility); it stays %s: create a new session for another agent", old.Spec.AgentID)))
	}
	if old.Spec.SpawnedBy != s.Spec.SpawnedBy && !v.isManager(ctx) {
		errs = append(errs, field.Forbidden(spec.Child("spawnedBy"), "only the operator sets spawnedBy"))
	}
	if old.Spec.Sandboxed && !s.Spec.Sandboxed && !v.isManager(ctx) {
		errs = append(errs, field.Forbidden(spec.Child("sandboxed"), "only the operator un-sandboxes a session; create a new session of an unsandboxed agent instead"))
	}
	relabel, err := v.judgeRelabel(ctx, &old.Spec, s)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	errs = append(errs, relabel...)
	if len(errs) > 0 {
		return nil, invalid("AgentSession", s.Name, errs...)
	}
	return nil, nil
}

// judgeSendPolicy requires the verb set-send-policy on the session when the request sets or
// changes spec.sendPolicy (from old, "" on create).
func (v *AgentSessionValidator) judgeSendPolicy(ctx context.Context, old sessionsv1alpha1.Action, s *sessionsv1alpha1.AgentSession) (string, error) {
	if s.Spec.SendPolicy == old || v.isManager(ctx) {
		return "", nil
	}
	ok, err := v.allowed(ctx, sessionsv1alpha1.GroupVersion.Group, "agentsessions", sessionsv1alpha1.VerbSetSendPolicy, s.Namespace, s.Name)
	if err != nil || ok {
		return "", err
	}
	return fmt.Sprintf("user %q may not change spec.sendPolicy of session %s (%q to %q): it overrides the SessionPolicy, so it needs the verb %s on agentsessions/%s (the agent-sessions-send-admin ClusterRole)",
		requestUser(ctx).Username, s.Spec.Key, old, s.Spec.SendPolicy, sessionsv1alpha1.VerbSetSendPolicy, s.Name), nil
}

// judgeRelabel applies the relabelling rule to a write of s from old (nil on create): a
// routing field that contradicts the key is refused to everyone; setting or changing any
// other needs the verb set-send-policy, as spec.sendPolicy does, unless the manager writes.
func (v *AgentSessionValidator) judgeRelabel(ctx context.Context, old *sessionsv1alpha1.AgentSessionSpec, s *sessionsv1alpha1.AgentSession) (field.ErrorList, error) {
	var errs field.ErrorList
	var changes []policy.Relabel
	for _, r := range policy.JudgeRelabel(old, &s.Spec) {
		if r.Contradicts {
			errs = append(errs, field.Invalid(field.NewPath("spec", r.Field), r.Value, r.Reason))
		} else {
			changes = append(changes, r)
		}
	}
	if len(changes) == 0 || v.isManager(ctx) {
		return errs, nil
	}
	ok, err := v.allowed(ctx, sessionsv1alpha1.GroupVersion.Group, "agentsessions", sessionsv1alpha1.VerbSetSendPolicy, s.Namespace, s.Name)
	if err != nil || ok {
		return errs, err
	}
	for _, r := range changes {
		errs = append(errs, field.Forbidden(field.NewPath("spec", r.Field), fmt.Sprintf(
			"user %q may not set or change spec.%s of session %s (to %q): %s; grant it on agentsessions/%s",
			requestUser(ctx).Username, r.Field, s.Spec.Key, r.Value, r.Reason, s.Name)))
	}
	return errs, nil
}

// ValidateDelete implements admission.Validator.
func (v *AgentSessionValidator) ValidateDelete(context.Context, *sessionsv1alpha1.AgentSession) (admission.Warnings, error) {
	return nil, nil
}

// judgeRestoreFrom refuses a new session that asks to adopt a retired session's transcript
// (the restore-from annotation) unless its creator may restore that session: the right the
// sessions tool's restore asks (caller.ManageSession, on the session's name). Without this,
// create alone would restore what restore itself guards.
func (v *AgentSessionValidator) judgeRestoreFrom(ctx context.Context, s *sessionsv1alpha1.AgentSession) (field.ErrorList, error) {
	if _, asked := s.Annotations[sessionsv1alpha1.RestoreFromAnnotation]; !asked || v.isManager(ctx) {
		return nil, nil
	}
	r := caller.ManageSession
	ok, err := v.allowed(ctx, sessionsv1alpha1.GroupVersion.Group, r.Resource, r.Verb, s.Namespace, s.Name)
	if err != nil || ok {
		return nil, err
	}
	path := field.NewPath("metadata", "annotations").Key(sessionsv1alpha1.RestoreFromAnnotation)
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
		"restoring a retired session needs the verb %s on %s %s, as kubectl sessions restore does", r.Verb, r.Resource, s.Name))}, nil
}
