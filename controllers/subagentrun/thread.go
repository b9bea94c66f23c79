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

package subagentrun

import (
	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// threadOf is the thread a thread-bound run's announces go to: one per run, named after it
// so that a channel plugin can open it and every later announce of the child finds it.
func threadOf(run *sessionsv1alpha1.SubagentRun) string {
	if !run.Spec.Thread {
		return ""
	}
	return "subagent-" + string(run.UID)
}

// threadContext is a thread-bound child's delivery context (policy.ThreadDestination): its
// requester's chat, in the run's own thread. Nil for a run that is not thread-bound.
func threadContext(run *sessionsv1alpha1.SubagentRun, requester *sessionsv1alpha1.AgentSession) *sessionsv1alpha1.DeliveryContext {
	thread := threadOf(run)
	if thread == "" {
		return nil
	}
	dc := policy.ThreadDestination(requester, thread)
	return &dc
}
