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
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
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

// ValidateCreate implements admission.Validator.
func (v *SubagentRunValidator) ValidateCreate(ctx context.Context, run *sessionsv1alpha1.SubagentRun) (admission.Warnings, error) {
	ns := run.Namespace
	if why := v.forgedMark(ctx, nil, run, managerOnlyAnnotations...); why != "" {
		return nil, forbidden("subagentruns", run.Name, why)
	}
	in := policy.SpawnInput{Spec: &run.Spec}
	if key := run.Spec.RequesterSessionKey; key != "" {
		ok, err := v.mayActAs(ctx, ns, key)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if !ok {
			return nil, forbidden("subagentruns", run.Name, actAsDenial(ctx, key, "spec.requesterSessionKey"))
		}
		s, err := lookup.New(v.Reader, v.APIReader).SessionByKey(ctx, ns, key)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if s == nil {
			fe, err := unknownSession(ctx, v.Reader, field.NewPath("spec", "requesterSessionKey"), ns, key, key)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			return nil, invalid("SubagentRun", run.Name, fe)
		}
		in.Requester = s
		if in.RequesterAgent, err = getAgent(ctx, v.Reader, v.APIReader, ns, s.Spec.AgentID); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		in.Depth = policy.SpawnDepth(s, lookup.ParentOf(ctx, v.Reader, ns))
		if in.ActiveChildren, err = activeChildren(ctx, v.Reader, ns, key); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	in.TargetID = policy.TargetAgentID(&run.Spec, in.Requester)
	var err error
	if in.TargetID == "" {
		if in.Agents, err = lookup.New(v.Reader, v.APIReader).AgentIDs(ctx, ns); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	if in.Target, err = getAgent(ctx, v.Reader, v.APIReader, ns, in.TargetID); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	pol, err := sessionPolicy(ctx, v.Reader, v.APIReader, ns)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if pol != nil {
		in.Limits = policy.LimitsFor(&pol.Spec)
	} else {
		in.Limits = policy.LimitsFor(nil)
	}
	if errs := policy.CheckSpawn(in); len(errs) > 0 {
		return nil, refusal("subagentruns", "SubagentRun", run.Name, errs)
	}
	if hint, ok := run.Annotations[sessionsv1alpha1.ChildSessionKeyAnnotation]; ok {
		if denial, err := v.judgeChildKey(ctx, ns, hint, in.TargetID); err != nil || denial != "" {
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			return nil, forbidden("subagentruns", run.Name, denial)
		}
	}
	var pspec *sessionsv1alpha1.SessionPolicySpec
	if pol != nil {
		pspec = &pol.Spec
	}
	if why := v.judgeBudget(pol, run.Spec.Budget, true); why != "" {
		return nil, forbidden("subagentruns", run.Name, why)
	}
	if why, err := v.judgeChain(ctx, run, policy.ChainMember{Requester: run.Spec.RequesterSessionKey}, pspec); err != nil || why != "" {
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return nil, forbidden("subagentruns", run.Name, why)
	}
	return nil, nil
}

// judgeChildKey accepts a child-session-key hint only from a user who may act as that
// session and only when it names a new session of the run's agent.
func (v *SubagentRunValidator) judgeChildKey(ctx context.Context, ns, hint, agentID string) (string, error) {
	ok, err := v.mayActAs(ctx, ns, hint)
	if err != nil || !ok {
		return actAsDenial(ctx, hint, "annotation "+sessionsv1alpha1.ChildSessionKeyAnnotation), err
	}
	existing, err := lookup.New(v.Reader, v.APIReader).SessionByKey(ctx, ns, hint)
	if err != nil {
		return "", err
	}
	return policy.CheckChildKey(hint, agentID, existing != nil), nil
}

// activeChildren counts the requester's runs that have not completed.
func activeChildren(ctx context.Context, r client.Reader, ns, requester string) (int, error) {
	var runs sessionsv1alpha1.SubagentRunList
	if err := r.List(ctx, &runs, client.InNamespace(ns), client.MatchingFields{cacheindex.RunRequester: requester}); err != nil {
		return 0, err
	}
	n := 0
	for _, run := range runs.Items {
		if !sessionsv1alpha1.Finished(run.Status.Conditions) {
			n++
		}
	}
	return n, nil
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
