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
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// forkSource is where a run with context fork starts its child from: the requester's
// transcript (admission made sure the child runs under the requester's agent). nil for an
// isolated run, or a requester without a transcript.
func forkSource(run *sessionsv1alpha1.SubagentRun, requester *sessionsv1alpha1.AgentSession) *turns.ForkSource {
	if run.Spec.Context != sessionsv1alpha1.ContextFork || requester == nil || requester.Status.SessionID == "" {
		return nil
	}
	return &turns.ForkSource{SessionKey: requester.Spec.Key, SessionID: requester.Status.SessionID}
}
