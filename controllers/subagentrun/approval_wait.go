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
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
)

// awaitingRun shows a run's wait for approval.
func awaitingRun(f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun]) {
	st := &f.Obj.Status
	ownerflow.ShowAwaiting(f, &st.Conditions, &st.Phase, sessionsv1alpha1.RunAwaitingApproval, sessionsv1alpha1.RunRunning)
}
