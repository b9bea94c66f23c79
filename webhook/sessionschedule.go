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

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// +kubebuilder:webhook:path=/validate-sessions-agents-dev-v1alpha1-sessionschedule,mutating=false,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=sessionschedules,verbs=create;update,versions=v1alpha1,name=vsessionschedule.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5

// maxScheduleNameLen keeps <name>-<unix minutes> a valid SessionSend name (and a label
// value: the sends are labelled with the schedule's name).
const maxScheduleNameLen = 63

// SessionScheduleValidator refuses a schedule whose cron expression or time zone does not
// parse (with the parser's message), and one whose writer may not start sends into its
// session (starters).
type SessionScheduleValidator struct{ starters }

// Validate judges a schedule on create and on each spec change.
func (v *SessionScheduleValidator) Validate(ctx context.Context, s *sessionsv1alpha1.SessionSchedule) error {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if len(s.Name) > maxScheduleNameLen {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), s.Name, maxScheduleNameLen))
	}
	if _, err := policy.ParseSchedule(s.Spec.Schedule, ""); err != nil {
		errs = append(errs, field.Invalid(spec.Child("schedule"), s.Spec.Schedule, err.Error()))
	} else if tz := s.Spec.TimeZone; tz != nil {
		if _, err := policy.ParseSchedule(s.Spec.Schedule, *tz); err != nil {
			errs = append(errs, field.Invalid(spec.Child("timeZone"), *tz, err.Error()))
		}
	}
	if fe := startKey(spec.Child("sessionKey"), s.Spec.SessionKey, s.Spec.AgentID); fe != nil {
		errs = append(errs, fe)
	}
	if len(errs) > 0 {
		return invalid("SessionSchedule", s.Name, errs...)
	}
	return v.judge(ctx, "sessionschedules", s.Name, s.Namespace, s.TargetKey())
}

// Warnings warns of a schedule whose Agent does not exist (yet): it is admitted, as GitOps
// may apply it before its Agent, and waits with Ready=False, AgentNotFound.
func (v *SessionScheduleValidator) Warnings(ctx context.Context, s *sessionsv1alpha1.SessionSchedule) admission.Warnings {
	a, err := getAgent(ctx, v.Reader, v.APIReader, s.Namespace, s.Spec.AgentID)
	if err != nil || a != nil {
		return nil
	}
	return admission.Warnings{"spec.agentId: " + policy.ScheduleAgentMissing(s.Spec.AgentID, s.Namespace)}
}
