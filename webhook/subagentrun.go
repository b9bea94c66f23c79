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
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
)

// +kubebuilder:webhook:path=/mutate-sessions-agents-dev-v1alpha1-subagentrun,mutating=true,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=subagentruns,verbs=create,versions=v1alpha1,name=msubagentrun.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:webhook:path=/validate-sessions-agents-dev-v1alpha1-subagentrun,mutating=false,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=subagentruns,verbs=create;update,versions=v1alpha1,name=vsubagentrun.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5

// SubagentRunDefaulter sets mode, whose default depends on thread (session when thread is
// true, else run): a CRD schema default cannot depend on another field. A spawn with no
// requester and no agentId (a person's minimal spawn) gets the namespace's default agent,
// so that the object says which agent runs it.
type SubagentRunDefaulter struct {
	Reader client.Reader
	// APIReader confirms cache misses (nil: none).
	APIReader client.Reader
	// Shard stamps shard.Label (see ShardLabel).
	Shard shard.Shard
}

var _ admission.Defaulter[*sessionsv1alpha1.SubagentRun] = &SubagentRunDefaulter{}

// Default implements admission.Defaulter.
func (d *SubagentRunDefaulter) Default(ctx context.Context, run *sessionsv1alpha1.SubagentRun) error {
	if run.Spec.Mode == "" {
		run.Spec.Mode = sessionsv1alpha1.ModeRun
		if run.Spec.Thread {
			run.Spec.Mode = sessionsv1alpha1.ModeSession
		}
	}
	if run.Spec.AgentID == "" && run.Spec.RequesterSessionKey == "" {
		// None found: the validator refuses the spawn and names the Agents.
		id, _, err := lookup.New(d.Reader, d.APIReader).DefaultAgentID(ctx, run.Namespace)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		run.Spec.AgentID = id
	}
	d.Shard.Stamp(run)
	return nil
}

// SubagentRunValidator applies the spawn guards on create: the user may speak for the
// requester, a child-key hint names a new session of the run's agent, the spawn guards, and
// a tool-made run is within the chain limits.
type SubagentRunValidator struct {
	Reader client.Reader
	// APIReader confirms cache misses (nil: none).
	APIReader client.Reader
	authz
	chains
	budgetGate
}

var _ admission.Validator[*sessionsv1alpha1.SubagentRun] = &SubagentRunValidator{}

// ValidateCreate implements admission.Validator: gather, judge (policy.JudgeSpawn), then
// admit the run to its chain, which counts what it admits and so comes last.
func (v *SubagentRunValidator) ValidateCreate(ctx context.Context, run *sessionsv1alpha1.SubagentRun) (admission.Warnings, error) {
	a, err := v.gatherSpawn(ctx, run)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if r := policy.JudgeSpawn(a); r != nil {
		return nil, answer("subagentruns", "SubagentRun", run.Name, r)
	}
	why, err := v.judgeChain(ctx, run, policy.ChainMember{Requester: run.Spec.RequesterSessionKey}, a.PolicySpec())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if why != "" {
		return nil, forbidden("subagentruns", run.Name, why)
	}
	return nil, nil
}

// gatherSpawn reads what JudgeSpawn decides on: the spawn's facts (lookup.GatherSpawn), what
// the spawn guards count (the requester's depth and active runs, the namespace's Agents when
// the spawn names none, the SessionPolicy), the marks it carries, the user's rights (act-as
// on the requester and on a child-key hint) and the budget.
func (v *SubagentRunValidator) gatherSpawn(ctx context.Context, run *sessionsv1alpha1.SubagentRun) (policy.SpawnAdmission, error) {
	ns, l := run.Namespace, lookup.New(v.Reader, v.APIReader)
	facts, err := l.GatherSpawn(ctx, ns, &run.Spec)
	if err != nil {
		return policy.SpawnAdmission{}, err
	}
	a := policy.SpawnAdmission{SpawnFacts: facts, Spec: &run.Spec, User: requestUser(ctx).Username,
		ForgedMark: v.forgedMark(ctx, nil, run, managerOnlyAnnotations...)}
	if facts.From != "" {
		if a.MayActAs, err = v.mayActAs(ctx, ns, facts.From); err != nil {
			return a, err
		}
	}
	if facts.Requester != nil {
		a.Depth = policy.SpawnDepth(facts.Requester, lookup.ParentOf(ctx, v.Reader, ns))
		if a.ActiveChildren, err = l.ActiveChildren(ctx, ns, facts.From); err != nil {
			return a, err
		}
	}
	if facts.TargetID == "" {
		if a.Agents, err = l.AgentIDs(ctx, ns); err != nil {
			return a, err
		}
	}
	if a.Policy, err = l.SessionPolicy(ctx, ns); err != nil {
		return a, err
	}
	if hint, ok := run.Annotations[sessionsv1alpha1.ChildSessionKeyAnnotation]; ok {
		a.ChildKey = &hint
		if a.MayActAsChild, err = v.mayActAs(ctx, ns, hint); err != nil || !a.MayActAsChild {
			return a, err
		}
		existing, err := l.SessionByKey(ctx, ns, hint)
		if err != nil {
			return a, err
		}
		a.ChildExists = existing != nil
	}
	a.BudgetDenial = v.judgeBudget(a.Policy, run.Spec.Budget, true)
	return a, nil
}

// ValidateUpdate implements admission.Validator: the spec is immutable but for cancel (as
// the CRD's rules also say) and the hop count and child key, which the controller trusts,
// change only by the operator.
func (v *SubagentRunValidator) ValidateUpdate(ctx context.Context, old, run *sessionsv1alpha1.SubagentRun) (admission.Warnings, error) {
	if err := policy.CancelOnlyRun(old.Spec, run.Spec); err != nil {
		return nil, invalid("SubagentRun", run.Name, err)
	}
	if why := v.forgedMark(ctx, old, run, slices.Concat(managerOnlyAnnotations, []string{sessionsv1alpha1.ChildSessionKeyAnnotation})...); why != "" {
		return nil, forbidden("subagentruns", run.Name, why)
	}
	return nil, nil
}

// ValidateDelete implements admission.Validator.
func (v *SubagentRunValidator) ValidateDelete(context.Context, *sessionsv1alpha1.SubagentRun) (admission.Warnings, error) {
	return nil, nil
}
