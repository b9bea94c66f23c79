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
	"encoding/json"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// +kubebuilder:webhook:path=/mutate-sessions-agents-dev-v1alpha1-toolapproval,mutating=true,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=toolapprovals,verbs=create;update,versions=v1alpha1,name=mtoolapproval.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5,reinvocationPolicy=IfNeeded
// +kubebuilder:webhook:path=/validate-sessions-agents-dev-v1alpha1-toolapproval,mutating=false,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=toolapprovals;toolapprovals/status,verbs=create;update,versions=v1alpha1,name=vtoolapproval.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5

// DecidedBy stamps who decides a ToolApproval. On the request that sets spec.decision it
// writes the admission request's user into the decided-by annotation; on every other
// request it puts back what the stored object had, so whatever a request typed there is
// gone before validation. The controller copies the annotation into status.decidedBy.
// The annotation, not managedFields, carries it: a field manager's name is whatever the
// client sends, the admission user is what the API server authenticated.
type DecidedBy struct{}

var _ admission.Defaulter[*sessionsv1alpha1.ToolApproval] = DecidedBy{}

// Default implements admission.Defaulter.
func (DecidedBy) Default(ctx context.Context, ta *sessionsv1alpha1.ToolApproval) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return err
	}
	var old *sessionsv1alpha1.ToolApproval
	if len(req.OldObject.Raw) > 0 {
		old = &sessionsv1alpha1.ToolApproval{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
	}
	ann := ta.GetAnnotations()
	delete(ann, sessionsv1alpha1.DecidedByAnnotation)
	switch {
	case old != nil && old.Spec.Decision == "" && ta.Spec.Decision != "":
		if ann == nil {
			ann = map[string]string{}
		}
		ann[sessionsv1alpha1.DecidedByAnnotation] = req.UserInfo.Username
	case old != nil:
		if by, ok := old.Annotations[sessionsv1alpha1.DecidedByAnnotation]; ok {
			if ann == nil {
				ann = map[string]string{}
			}
			ann[sessionsv1alpha1.DecidedByAnnotation] = by
		}
	}
	ta.SetAnnotations(ann)
	return nil
}

// ToolApprovalValidator judges who may create, decide and write the status of a
// ToolApproval (policy.JudgeApproval): setting spec.decision needs the verb approve on
// toolapprovals, asked with a SubjectAccessReview for that object's name, and comes before
// spec.expiresAt by clock (the controller's clock: a decision between expiresAt and the
// controller's writing Expired is refused, not honoured).
type ToolApprovalValidator struct {
	authz
	clock clock.PassiveClock
}

var _ admission.Validator[*sessionsv1alpha1.ToolApproval] = &ToolApprovalValidator{}

// ValidateCreate implements admission.Validator.
func (v *ToolApprovalValidator) ValidateCreate(ctx context.Context, ta *sessionsv1alpha1.ToolApproval) (admission.Warnings, error) {
	return nil, v.judge(ctx, policy.ApprovalChange{Cur: ta})
}

// ValidateUpdate implements admission.Validator.
func (v *ToolApprovalValidator) ValidateUpdate(ctx context.Context, old, ta *sessionsv1alpha1.ToolApproval) (admission.Warnings, error) {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil, err
	}
	return nil, v.judge(ctx, policy.ApprovalChange{Old: old, Cur: ta, Status: req.SubResource == "status"})
}

// ValidateDelete implements admission.Validator.
func (v *ToolApprovalValidator) ValidateDelete(context.Context, *sessionsv1alpha1.ToolApproval) (admission.Warnings, error) {
	return nil, nil
}

func (v *ToolApprovalValidator) judge(ctx context.Context, c policy.ApprovalChange) error {
	c.User, c.Manager, c.Now = requestUser(ctx).Username, v.isManager(ctx), v.now()
	if !c.Status && c.SetsDecision() && !c.Manager {
		ok, err := v.allowed(ctx, sessionsv1alpha1.GroupVersion.Group, "toolapprovals", sessionsv1alpha1.VerbApprove, c.Cur.Namespace, c.Cur.Name)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		c.MayApprove = ok
	}
	if fe := policy.JudgeApproval(c); fe != nil {
		return refusal("toolapprovals", "ToolApproval", c.Cur.Name, field.ErrorList{fe})
	}
	return nil
}

func (v *ToolApprovalValidator) now() time.Time {
	if v.clock == nil {
		return clock.RealClock{}.Now()
	}
	return v.clock.Now()
}
