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
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// ApprovalVerdict says whether a tool call waits for a person, and for how long at most.
type ApprovalVerdict struct {
	Require bool
	Timeout time.Duration
	// Rule names the rule that decided, for the transcript and logs.
	Rule string
}

// ApprovalFor judges a call of tool: the namespace admin's rules (SessionPolicy
// spec.toolApproval) and the Agent's (spec.tools.approval), each first match wins, no
// match allows. A require of either side holds: an Agent's allow cannot loosen the
// admin's require, and the admin's allow does not loosen what the Agent's owner asked
// for. When both require, the admin's timeout applies.
func ApprovalFor(admin, agent *sessionsv1alpha1.ApprovalPolicy, tool string) ApprovalVerdict {
	if r, i := firstApprovalRule(admin, tool); r != nil && r.Action == sessionsv1alpha1.ApprovalRequire {
		return requireBy(r, fmt.Sprintf("SessionPolicy spec.toolApproval.rules[%d]", i))
	}
	if r, i := firstApprovalRule(agent, tool); r != nil && r.Action == sessionsv1alpha1.ApprovalRequire {
		return requireBy(r, fmt.Sprintf("Agent spec.tools.approval.rules[%d]", i))
	}
	return ApprovalVerdict{}
}

func firstApprovalRule(p *sessionsv1alpha1.ApprovalPolicy, tool string) (*sessionsv1alpha1.ToolApprovalRule, int) {
	if p == nil {
		return nil, -1
	}
	for i := range p.Rules {
		if MatchAny(p.Rules[i].Tools, tool) {
			return &p.Rules[i], i
		}
	}
	return nil, -1
}

func requireBy(r *sessionsv1alpha1.ToolApprovalRule, name string) ApprovalVerdict {
	secs := int32(sessionsv1alpha1.DefaultApprovalTimeoutSeconds)
	if r.TimeoutSeconds != nil && *r.TimeoutSeconds > 0 {
		secs = *r.TimeoutSeconds
	}
	return ApprovalVerdict{Require: true, Timeout: time.Duration(secs) * time.Second, Rule: name}
}

// ValidateApprovalPolicy reports rules whose globs cannot match.
func ValidateApprovalPolicy(p *sessionsv1alpha1.ApprovalPolicy, path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	for i, r := range p.Rules {
		for j, g := range r.Tools {
			if err := ValidateGlob(g); err != nil {
				errs = append(errs, field.Invalid(path.Child("rules").Index(i).Child("tools").Index(j), g, err.Error()))
			}
		}
	}
	return errs
}

// ApprovalChange is an admission request on a ToolApproval, as the webhook gathered it.
type ApprovalChange struct {
	// Old is nil on create.
	Old, Cur *sessionsv1alpha1.ToolApproval
	// User is the request's user; Manager says it is the operator's own.
	User    string
	Manager bool
	// Status: the request writes the status subresource.
	Status bool
	// MayApprove: RBAC grants User the verb approve on this ToolApproval (asked only when
	// the request sets spec.decision).
	MayApprove bool
	// Now is the webhook's clock (the controller's clock in one process): a decision at or
	// after spec.expiresAt is refused even while the controller has not yet written Expired.
	Now time.Time
}

// SetsDecision says the request is the one that sets spec.decision.
func (c ApprovalChange) SetsDecision() bool {
	return c.Old != nil && c.Old.Spec.Decision == "" && c.Cur.Spec.Decision != ""
}

// JudgeApproval decides an admission request on a ToolApproval; nil allows it. Only the
// operator creates one and writes its status (and so the phase, decidedBy and decidedAt); a
// person with the verb approve sets spec.decision once, and the operator never does (it may
// only expire); the decided-by annotation is the admission user of the deciding request
// (the mutating webhook writes it) and changes on no other request.
func JudgeApproval(c ApprovalChange) *field.Error {
	ann := field.NewPath("metadata", "annotations").Key(sessionsv1alpha1.DecidedByAnnotation)
	switch {
	case c.Old == nil:
		if !c.Manager {
			return field.Forbidden(field.NewPath("metadata"), "ToolApprovals are created by the operator when an agent's tool call needs approval; decide one with kubectl sessions approve or deny")
		}
		if c.Cur.Spec.Decision != "" {
			return field.Forbidden(field.NewPath("spec", "decision"), "a ToolApproval is created undecided")
		}
		if _, ok := c.Cur.Annotations[sessionsv1alpha1.DecidedByAnnotation]; ok {
			return field.Forbidden(ann, "set only from the request that decides")
		}
		return nil
	case c.Status:
		if !c.Manager {
			return field.Forbidden(field.NewPath("status"), "the status of a ToolApproval (phase, decidedBy, decidedAt) is written by the operator only")
		}
		return nil
	}
	old, cur := c.Old.Spec, c.Cur.Spec
	old.Decision, old.Reason, cur.Decision, cur.Reason = "", "", "", ""
	if !equality.Semantic.DeepEqual(old, cur) {
		return field.Forbidden(field.NewPath("spec"), "spec is immutable but for decision and reason, set once")
	}
	if c.Old.Spec.Decision != "" && (c.Cur.Spec.Decision != c.Old.Spec.Decision || c.Cur.Spec.Reason != c.Old.Spec.Reason) {
		return field.Forbidden(field.NewPath("spec", "decision"), fmt.Sprintf("already decided (%s); a decision is set once", c.Old.Spec.Decision))
	}
	if c.SetsDecision() {
		switch {
		case c.Manager:
			return field.Forbidden(field.NewPath("spec", "decision"), "the operator may only expire an approval; a person decides")
		case c.Old.Status.Decided():
			return field.Forbidden(field.NewPath("spec", "decision"), fmt.Sprintf("the approval is already %s", c.Old.Status.Phase))
		case !c.MayApprove:
			return field.Forbidden(field.NewPath("spec", "decision"), fmt.Sprintf(
				"user %q may not decide ToolApproval %s: setting spec.decision needs the verb %s on toolapprovals (the agent-sessions-approver role, or a Role granting it with resourceNames: [%s])",
				c.User, c.Cur.Name, sessionsv1alpha1.VerbApprove, c.Cur.Name))
		case !c.Now.Before(c.Old.Spec.ExpiresAt.Time):
			return field.Forbidden(field.NewPath("spec", "decision"), fmt.Sprintf("the approval expired at %s (spec.expiresAt); the call is denied",
				c.Old.Spec.ExpiresAt.UTC().Format(time.RFC3339)))
		}
	}
	by, had := c.Old.Annotations[sessionsv1alpha1.DecidedByAnnotation]
	now, has := c.Cur.Annotations[sessionsv1alpha1.DecidedByAnnotation]
	if by != now || had != has {
		if !c.SetsDecision() || now != c.User {
			return field.Forbidden(ann, "written by the operator from the request that decides; nobody sets it")
		}
	}
	return nil
}
