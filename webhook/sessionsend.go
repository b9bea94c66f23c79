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
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// +kubebuilder:webhook:path=/validate-sessions-agents-dev-v1alpha1-sessionsend,mutating=false,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=sessionsends,verbs=create;update,versions=v1alpha1,name=vsessionsend.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5

// SessionSendValidator judges a send on create: the user may speak for the requester, the
// target exists (or is an Agent's main session judged as if it existed), the requester may
// see it, the send policy allows it, and a tool-made send is within the chain limits.
type SessionSendValidator struct {
	Reader client.Reader
	// APIReader confirms cache misses (nil: none).
	APIReader client.Reader
	authz
	chains
	budgetGate
}

var _ admission.Validator[*sessionsv1alpha1.SessionSend] = &SessionSendValidator{}

// ValidateCreate implements admission.Validator: gather, judge (policy.JudgeSend), then
// admit the send to its chain, which counts what it admits and so comes last.
func (v *SessionSendValidator) ValidateCreate(ctx context.Context, send *sessionsv1alpha1.SessionSend) (admission.Warnings, error) {
	a, err := v.gatherSend(ctx, send)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if r := policy.JudgeSend(a); r != nil {
		return nil, answer("sessionsends", "SessionSend", send.Name, r)
	}
	if a.Command != nil {
		return nil, nil // a /send command is not a message: no chain
	}
	why, err := v.judgeChain(ctx, send, sendMember(send, a.Target.Spec.Key), a.PolicySpec())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if why != "" {
		return nil, forbidden("sessionsends", send.Name, why)
	}
	return nil, nil
}

// gatherSend reads what JudgeSend decides on: the send's facts (lookup.GatherSend), the
// marks it carries and the user's rights (act-as on the requester; set-send-policy on the
// target for a person's /send command), and the budget.
func (v *SessionSendValidator) gatherSend(ctx context.Context, send *sessionsv1alpha1.SessionSend) (policy.SendAdmission, error) {
	facts, err := lookup.New(v.Reader, v.APIReader).GatherSend(ctx, send.Namespace, send.Spec.FromSessionKey, send.Spec.SessionKey)
	if err != nil {
		return policy.SendAdmission{}, err
	}
	a := policy.SendAdmission{SendFacts: facts, User: requestUser(ctx).Username,
		ForgedMark: v.forgedMark(ctx, nil, send, managerOnlyAnnotations...)}
	if a.StarterMarks, err = v.judgeStarterMarks(ctx, nil, send); err != nil {
		return a, err
	}
	if from := send.Spec.FromSessionKey; from != "" {
		if a.MayActAs, err = v.mayActAs(ctx, send.Namespace, from); err != nil {
			return a, err
		}
	}
	if cmd, ok := policy.ParseSendCommand(send.Spec.Message); ok {
		a.Command = &cmd
		if send.Spec.FromSessionKey == "" && facts.Target != nil {
			a.MayCommand, err = v.allowed(ctx, sessionsv1alpha1.GroupVersion.Group, "agentsessions", sessionsv1alpha1.VerbSetSendPolicy, send.Namespace, facts.Target.Name)
		}
	}
	a.BudgetDenial = v.judgeBudget(facts.Policy, send.Spec.Budget, false)
	return a, err
}

// ValidateUpdate implements admission.Validator: the spec is immutable but for cancel (as
// the CRD's rules also say) and the operator's annotations and starter labels change only
// by the operator.
func (v *SessionSendValidator) ValidateUpdate(ctx context.Context, old, send *sessionsv1alpha1.SessionSend) (admission.Warnings, error) {
	if err := policy.CancelOnlySend(old.Spec, send.Spec); err != nil {
		return nil, invalid("SessionSend", send.Name, err)
	}
	if why := v.forgedMark(ctx, old, send, managerOnlyAnnotations...); why != "" {
		return nil, forbidden("sessionsends", send.Name, why)
	}
	if errs, err := v.judgeStarterMarks(ctx, old, send); err != nil || len(errs) > 0 {
		return nil, starterMarksAnswer(send, errs, err)
	}
	return nil, nil
}

// starterMarksAnswer is the answer to a write judgeStarterMarks refused (errs) or could not
// judge (err).
func starterMarksAnswer(send *sessionsv1alpha1.SessionSend, errs field.ErrorList, err error) error {
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	return invalid("SessionSend", send.Name, errs...)
}

// ValidateDelete implements admission.Validator.
func (v *SessionSendValidator) ValidateDelete(context.Context, *sessionsv1alpha1.SessionSend) (admission.Warnings, error) {
	return nil, nil
}

// getAgent returns the Agent named id, or nil. A cache miss is confirmed with the API
// server: an Agent applied together with the run or send that names it may not be cached.
func getAgent(ctx context.Context, cache, api client.Reader, ns, id string) (*sessionsv1alpha1.Agent, error) {
	if id == "" {
		return nil, nil
	}
	return lookup.New(cache, api).Agent(ctx, ns, id)
}

// invalid is a 422 that names the fields.
func invalid(kind, name string, errs ...*field.Error) error {
	return apierrors.NewInvalid(sessionsv1alpha1.GroupVersion.WithKind(kind).GroupKind(), name, errs)
}

// forbidden is a 403 carrying the policy's reason.
func forbidden(resource, name, reason string) error {
	return apierrors.NewForbidden(sessionsv1alpha1.GroupVersion.WithResource(resource).GroupResource(), name, errors.New(reason))
}
