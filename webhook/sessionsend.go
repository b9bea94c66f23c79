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
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
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

// ValidateCreate implements admission.Validator.
func (v *SessionSendValidator) ValidateCreate(ctx context.Context, send *sessionsv1alpha1.SessionSend) (admission.Warnings, error) {
	spec := field.NewPath("spec")
	ns := send.Namespace
	if why := v.forgedMark(ctx, nil, send, managerOnlyAnnotations...); why != "" {
		return nil, forbidden("sessionsends", send.Name, why)
	}
	if errs, err := v.judgeStarterMarks(ctx, nil, send); err != nil || len(errs) > 0 {
		return nil, starterMarksAnswer(send, errs, err)
	}
	var requester *sessionsv1alpha1.AgentSession
	agentID := ""
	if from := send.Spec.FromSessionKey; from != "" {
		ok, err := v.mayActAs(ctx, ns, from)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if !ok {
			return nil, forbidden("sessionsends", send.Name, actAsDenial(ctx, from, "spec.fromSessionKey"))
		}
		s, err := lookup.New(v.Reader, v.APIReader).SessionByKey(ctx, ns, from)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if s == nil {
			return nil, v.unknown(ctx, send, spec.Child("fromSessionKey"), from, from)
		}
		requester, agentID = s, s.Spec.AgentID
	}
	ref := send.Spec.SessionKey
	target, key, err := lookup.New(v.Reader, v.APIReader).SendTarget(ctx, ns, ref, agentID)
	if errors.Is(err, lookup.ErrMainWithoutRequester) {
		return nil, invalid("SessionSend", send.Name, field.Invalid(spec.Child("sessionKey"), ref, err.Error()))
	}
	if err == nil && target == nil {
		// The controller creates an Agent's main session on first send: judge that session.
		var agent *sessionsv1alpha1.Agent
		if agent, err = getAgent(ctx, v.Reader, v.APIReader, ns, sessionkey.AgentOf(key)); err == nil {
			target = policy.ImpliedSession(key, agent)
		}
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if target == nil {
		return nil, v.unknown(ctx, send, spec.Child("sessionKey"), ref, key)
	}
	pol, err := sessionPolicy(ctx, v.Reader, v.APIReader, ns)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var pspec *sessionsv1alpha1.SessionPolicySpec
	if pol != nil {
		pspec = &pol.Spec
	}
	if requester != nil {
		agent, err := getAgent(ctx, v.Reader, v.APIReader, ns, requester.Spec.AgentID)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		a2a := sessionsv1alpha1.AgentToAgentSpec{}
		if pspec != nil {
			a2a = pspec.AgentToAgent
		}
		level := policy.EffectiveVisibility(pspec, requester, agent)
		if ok, why := policy.Visible(level, a2a, requester, target, lookup.ParentOf(ctx, v.Reader, ns)); !ok {
			return nil, forbidden("sessionsends", send.Name, "send denied: "+why)
		}
	}
	if cmd, ok := policy.ParseSendCommand(send.Spec.Message); ok {
		// /send on|off|inherit sets the target's spec.sendPolicy and never reaches the model:
		// owner-only (the verb set-send-policy), and not judged by the send policy it changes.
		return nil, v.judgeSendCommand(ctx, send, cmd, target)
	}
	var sp *sessionsv1alpha1.SendPolicySpec
	if pspec != nil {
		sp = &pspec.SendPolicy
	}
	if d := policy.DecideSend(sp, policy.TargetOf(target)); !d.Allowed {
		return nil, forbidden("sessionsends", send.Name, d.Reason)
	}
	if why := v.judgeBudget(pol, send.Spec.Budget, false); why != "" {
		return nil, forbidden("sessionsends", send.Name, why)
	}
	if why, err := v.judgeChain(ctx, send, sendMember(send, target.Spec.Key), pspec); err != nil || why != "" {
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return nil, forbidden("sessionsends", send.Name, why)
	}
	return nil, nil
}

// judgeSendCommand admits a /send command only from a person who holds the verb
// set-send-policy on the target session (the SubjectAccessReview a write of spec.sendPolicy
// asks); a session's is refused.
func (v *SessionSendValidator) judgeSendCommand(ctx context.Context, send *sessionsv1alpha1.SessionSend, cmd policy.SendCommand, target *sessionsv1alpha1.AgentSession) error {
	name := target.Name
	if name == "" { // a main session the send would create
		name = sessionkey.ObjectName(target.Spec.Key)
	}
	may := false
	if send.Spec.FromSessionKey == "" {
		var err error
		if may, err = v.allowed(ctx, sessionsv1alpha1.GroupVersion.Group, "agentsessions", sessionsv1alpha1.VerbSetSendPolicy, send.Namespace, name); err != nil {
			return apierrors.NewInternalError(err)
		}
	}
	if why := policy.SendCommandDenial(cmd, send.Spec.FromSessionKey, requestUser(ctx).Username, target.Spec.Key, name, may); why != "" {
		return forbidden("sessionsends", send.Name, why)
	}
	return nil
}

// unknown is the 422 for a key that names no session, saying why.
func (v *SessionSendValidator) unknown(ctx context.Context, send *sessionsv1alpha1.SessionSend, path *field.Path, ref, key string) error {
	fe, err := unknownSession(ctx, v.Reader, path, send.Namespace, ref, key)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	return invalid("SessionSend", send.Name, fe)
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

func sessionPolicy(ctx context.Context, cache, api client.Reader, ns string) (*sessionsv1alpha1.SessionPolicy, error) {
	return lookup.New(cache, api).SessionPolicy(ctx, ns)
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
