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

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// judgeStarterMarks refuses a send write (old nil on create) that sets, changes or removes
// the label naming a SessionSchedule or SessionHook, unless its user is the part of the
// operator that creates such sends: the manager (a schedule's tick; it may do anything the
// store may), or a user granted the verb deliver on that SessionHook (the transcript-store's
// ServiceAccount, for a delivery). A namespace user's label would otherwise pass their
// message off as a tick or a delivery, and steer the schedule's concurrency policy.
func (a authz) judgeStarterMarks(ctx context.Context, old, send *sessionsv1alpha1.SessionSend) (field.ErrorList, error) {
	var oldLabels map[string]string
	if old != nil {
		oldLabels = old.Labels
	}
	var errs field.ErrorList
	for _, m := range policy.StarterMarks(oldLabels, send.Labels) {
		if a.isManager(ctx) {
			continue
		}
		if m.Label == sessionsv1alpha1.HookLabel && m.Name != "" {
			ok, err := a.allowed(ctx, sessionsv1alpha1.GroupVersion.Group, "sessionhooks", sessionsv1alpha1.VerbDeliver, send.Namespace, m.Name)
			if err != nil {
				return nil, err
			}
			if ok {
				continue
			}
		}
		errs = append(errs, policy.StarterMarkDenial(m))
	}
	return errs, nil
}
