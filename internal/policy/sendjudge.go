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

package policy

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// SendFacts is what a send's admission and its controller both need, gathered once
// (lookup.GatherSend): who asks, whom, under which policy.
type SendFacts struct {
	// Namespace, From (spec.fromSessionKey) and Ref (the target as the send names it).
	Namespace, From, Ref string
	// Requester is From's session: nil for a person's send, or when no session has From.
	Requester *sessionsv1alpha1.AgentSession
	// RequesterAgent is the Agent the requester runs (or From's key names); nil when none.
	RequesterAgent *sessionsv1alpha1.Agent
	// RequesterAgentID is the agent the alias main resolves against: the requester's, else
	// the one From's key names ("" for a person's send).
	RequesterAgentID string
	// Key is the session key Ref names. MainWithoutRequester: Ref is the alias main (or
	// global) and the send has no requester, so it names nothing.
	Key                  string
	MainWithoutRequester bool
	// Target is the session Ref names or, when none has it, the main session a first send
	// creates (Implied, ImpliedSession); nil when neither.
	Target  *sessionsv1alpha1.AgentSession
	Implied bool
	// KeyAgent is the Agent Key names, read when no session has Key; nil when none.
	KeyAgent *sessionsv1alpha1.Agent
	// Policy is the namespace's SessionPolicy; nil when there is none.
	Policy *sessionsv1alpha1.SessionPolicy
	// ParentOf reads a session's parent key, for tree visibility.
	ParentOf ParentOf
}

// PolicySpec is the SessionPolicy's spec; nil when there is none.
func (f SendFacts) PolicySpec() *sessionsv1alpha1.SessionPolicySpec { return specOf(f.Policy) }

// specOf is p's spec; nil when there is no SessionPolicy.
func specOf(p *sessionsv1alpha1.SessionPolicy) *sessionsv1alpha1.SessionPolicySpec {
	if p == nil {
		return nil
	}
	return &p.Spec
}

// SendAdmission is what admission asks beyond the facts: the marks the user wrote, the user's
// rights, the command the message is and the budget.
type SendAdmission struct {
	SendFacts
	// ForgedMark refuses a manager-only mark the user may not write ("" when none).
	ForgedMark string
	// StarterMarks refuse starter labels the user may not write.
	StarterMarks field.ErrorList
	// MayActAs: the user may speak for From. User is the user's name.
	MayActAs bool
	User     string
	// Command is the /send command the message is, if it is one; MayCommand: the user holds
	// set-send-policy on the target.
	Command    *SendCommand
	MayCommand bool
	// BudgetDenial refuses a spent or too small budget ("" when none).
	BudgetDenial string
}

// Refusal is why admission refuses a create (a send, a spawn): field errors (422) or a
// forbidden reason (403).
type Refusal struct {
	Invalid   field.ErrorList
	Forbidden string
}

// FieldRefusal answers field errors by their cause: a 403 when a policy refuses (the errors
// of type Forbidden: allowAgents, spawn depth, children, sandbox), so that a caller knows
// other arguments will not help, listing only the policy's reasons, each with its field
// path; else a 422 that names the fields to fix (a model not allowed, mode session without
// thread, a bad attachment). Nil for no errors.
func FieldRefusal(errs field.ErrorList) *Refusal {
	if len(errs) == 0 {
		return nil
	}
	denied := errs.Filter(func(e error) bool {
		fe, ok := e.(*field.Error)
		return !ok || fe.Type != field.ErrorTypeForbidden
	})
	if len(denied) > 0 {
		return &Refusal{Forbidden: denied.ToAggregate().Error()}
	}
	return &Refusal{Invalid: errs}
}

// JudgeSend is admission's decision on a new send, in the order a person fixes them: the
// marks, the right to speak for the requester, the requester and target exist, the requester
// may see the target, a /send command's owner, the send policy and the budget. Nil admits it
// (the chain limits are asked after, as they count what they admit).
func JudgeSend(a SendAdmission) *Refusal {
	spec := field.NewPath("spec")
	switch {
	case a.ForgedMark != "":
		return &Refusal{Forbidden: a.ForgedMark}
	case len(a.StarterMarks) > 0:
		return &Refusal{Invalid: a.StarterMarks}
	case a.From != "" && !a.MayActAs:
		return &Refusal{Forbidden: ActAsDenial(a.User, a.From, "spec.fromSessionKey")}
	case a.From != "" && a.Requester == nil:
		return &Refusal{Invalid: field.ErrorList{UnknownSession(spec.Child("fromSessionKey"), a.Namespace, a.From, a.From, a.RequesterAgent != nil)}}
	case a.MainWithoutRequester:
		return &Refusal{Invalid: field.ErrorList{field.Invalid(spec.Child("sessionKey"), a.Ref, MainWithoutRequester)}}
	case a.Target == nil:
		return &Refusal{Invalid: field.ErrorList{UnknownSession(spec.Child("sessionKey"), a.Namespace, a.Ref, a.Key, a.KeyAgent != nil)}}
	}
	pspec := a.PolicySpec()
	if a.Requester != nil {
		a2a := sessionsv1alpha1.AgentToAgentSpec{}
		if pspec != nil {
			a2a = pspec.AgentToAgent
		}
		level := EffectiveVisibility(pspec, a.Requester, a.RequesterAgent)
		if ok, why := Visible(level, a2a, a.Requester, a.Target, a.ParentOf); !ok {
			return &Refusal{Forbidden: "send denied: " + why}
		}
	}
	if a.Command != nil {
		// /send on|off|inherit sets the target's spec.sendPolicy and never reaches the model:
		// owner-only, and not judged by the send policy it changes.
		if why := SendCommandDenial(*a.Command, a.From, a.User, a.Target.Spec.Key, a.Target.Name, a.MayCommand); why != "" {
			return &Refusal{Forbidden: why}
		}
		return nil
	}
	var sp *sessionsv1alpha1.SendPolicySpec
	if pspec != nil {
		sp = &pspec.SendPolicy
	}
	if d := DecideSend(sp, TargetOf(a.Target)); !d.Allowed {
		return &Refusal{Forbidden: d.Reason}
	}
	if a.BudgetDenial != "" {
		return &Refusal{Forbidden: a.BudgetDenial}
	}
	return nil
}

// MainWithoutRequester refuses the alias main (or global) in a send that has no requester:
// the alias names the requester's main session, and a person's send has no requester.
const MainWithoutRequester = "main names the requester's main session and this send has no fromSessionKey; use the target's full key, e.g. agent:<agentId>:main"

// ActAsDenial names the rule a user broke by speaking for the session with key (in field),
// and the grant that would allow it.
func ActAsDenial(user, key, fieldName string) string {
	return fmt.Sprintf("user %q may not act as session %s (%s): only the operator or a user granted the verb %s on agentsessions/%s may; leave %s empty to act as yourself",
		user, key, fieldName, sessionsv1alpha1.VerbActAs, sessionkey.ObjectName(key), fieldName)
}

// UnknownSession says why ref (resolved to key) names no session, so that a person can fix
// it: a key outside the grammar (and no sessionId either), the main session of an Agent that
// does not exist (agentExists: the Agent key names exists), or a well-formed key no session
// has.
func UnknownSession(path *field.Path, ns, ref, key string, agentExists bool) *field.Error {
	if _, err := sessionkey.Parse(key); err != nil {
		why := err.Error()
		if ke := (*sessionkey.Error)(nil); errors.As(err, &ke) {
			why = ke.Reason
		}
		return field.Invalid(path, ref, fmt.Sprintf("not a valid session key (%s) and no session in namespace %s has it as sessionId", why, ns))
	}
	if id := sessionkey.AgentOf(key); id != "" && !agentExists {
		e := field.NotFound(path, ref)
		e.Detail = fmt.Sprintf("Agent %s does not exist in namespace %s; create the Agent first", id, ns)
		return e
	}
	e := field.NotFound(path, ref)
	e.Detail = fmt.Sprintf("no AgentSession in namespace %s has this key or sessionId", ns)
	return e
}
