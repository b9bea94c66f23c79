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

	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// judgeCarried returns the denial of an object carrying a chain from across the wire
// (CarriedChainAnnotation: a door stamps what its caller carried, the manager passes it on)
// that is over the namespace's chain limits, or "". Anyone may set the annotation: it is
// judged against this namespace's limits and can only narrow them, and nothing is counted
// under its id, so an id copied from another caller's chain changes nothing of that chain.
func (c chains) judgeCarried(obj client.Object, p *sessionsv1alpha1.SessionPolicySpec) string {
	carried, err := policy.CarriedOf(obj.GetAnnotations())
	if err != nil || carried == nil {
		return errText(err)
	}
	if d := policy.JudgeCarried(carried, p, c.clock.Now()); d != nil {
		// No Event here: the root is the sender's, and a caller could name any root; the
		// sender's manager tells its root when the refusal reaches it.
		return d.Message
	}
	return ""
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// judgeDoorSend returns the denial of a send a door made (DoorAnnotation) over the
// namespace's door limits, or "": sends into one session and by one caller per window,
// counted whatever the caller carried. The caller is the request's user, whom the door
// acts as.
func (c chains) judgeDoorSend(ctx context.Context, obj client.Object, member policy.ChainMember, p *sessionsv1alpha1.SessionPolicySpec) string {
	if _, door := obj.GetAnnotations()[sessionsv1alpha1.DoorAnnotation]; !door || c.doors == nil || member.Target == "" {
		return ""
	}
	if d := c.doors.admit(obj.GetNamespace(), member.Target, requestUser(ctx).Username, policy.DoorSendLimits(p), !isDryRun(ctx)); d != nil {
		return d.Message
	}
	return ""
}
