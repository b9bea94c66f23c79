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
	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// SpawnFacts is what a spawn's admission and its controller both need, gathered once
// (lookup.GatherSpawn): who asks, and the agent the child runs under.
type SpawnFacts struct {
	// Namespace and From (spec.requesterSessionKey; "" for a person's spawn).
	Namespace, From string
	// Requester is From's session: nil for a person's spawn, or when no session has From.
	Requester *sessionsv1alpha1.AgentSession
	// RequesterAgent is the Agent the requester runs (or From's key names, when no session
	// has From); nil when none.
	RequesterAgent *sessionsv1alpha1.Agent
	// TargetID is the agent the child runs under (TargetAgentID); Target its Agent, nil when
	// none has that name.
	TargetID string
	Target   *sessionsv1alpha1.Agent
}

// SpawnAdmission is what admission asks beyond the facts: what the spawn guards count, the
// marks the user wrote, the user's rights, a child-key hint and the budget.
type SpawnAdmission struct {
	SpawnFacts
	Spec *sessionsv1alpha1.SubagentRunSpec
	// Depth is the requester's spawn depth (SpawnDepth); ActiveChildren the requester's
	// runs that have not finished.
	Depth, ActiveChildren int
	// Agents are the namespace's Agent names, gathered only when there is no TargetID: the
	// refusal names them.
	Agents []string
	// Policy is the namespace's SessionPolicy (its attachment bounds); nil when there is none.
	Policy *sessionsv1alpha1.SessionPolicy
	// ForgedMark refuses a manager-only mark the user may not write ("" when none).
	ForgedMark string
	// MayActAs: the user may speak for From. User is the user's name.
	MayActAs bool
	User     string
	// ChildKey is the child-session-key annotation, when the spawn carries one: the user must
	// be allowed to act as it (MayActAsChild) and it must name a new session (ChildExists:
	// a session has it).
	ChildKey      *string
	MayActAsChild bool
	ChildExists   bool
	// BudgetDenial refuses a spent or too small budget ("" when none).
	BudgetDenial string
}

// PolicySpec is the SessionPolicy's spec; nil when there is none.
func (a SpawnAdmission) PolicySpec() *sessionsv1alpha1.SessionPolicySpec { return specOf(a.Policy) }

// JudgeSpawn is admission's decision on a new spawn, in the order a person fixes them: the
// marks, the right to speak for the requester, the requester exists, the spawn guards
// (CheckSpawn, answered by FieldRefusal), a child-key hint, the budget. Nil admits it (the
// chain limits are asked after, as they count what they admit).
func JudgeSpawn(a SpawnAdmission) *Refusal {
	switch {
	case a.ForgedMark != "":
		return &Refusal{Forbidden: a.ForgedMark}
	case a.From != "" && !a.MayActAs:
		return &Refusal{Forbidden: ActAsDenial(a.User, a.From, "spec.requesterSessionKey")}
	case a.From != "" && a.Requester == nil:
		return &Refusal{Invalid: field.ErrorList{
			UnknownSession(field.NewPath("spec", "requesterSessionKey"), a.Namespace, a.From, a.From, a.RequesterAgent != nil)}}
	}
	if r := FieldRefusal(CheckSpawn(SpawnInput{Spec: a.Spec, Requester: a.Requester, RequesterAgent: a.RequesterAgent,
		TargetID: a.TargetID, Target: a.Target, Depth: a.Depth, ActiveChildren: a.ActiveChildren,
		Limits: LimitsFor(a.PolicySpec()), Agents: a.Agents})); r != nil {
		return r
	}
	if hint := a.ChildKey; hint != nil {
		if !a.MayActAsChild {
			return &Refusal{Forbidden: ActAsDenial(a.User, *hint, "annotation "+sessionsv1alpha1.ChildSessionKeyAnnotation)}
		}
		if why := CheckChildKey(*hint, a.TargetID, a.ChildExists); why != "" {
			return &Refusal{Forbidden: why}
		}
	}
	if a.BudgetDenial != "" {
		return &Refusal{Forbidden: a.BudgetDenial}
	}
	return nil
}
