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

package turns

import (
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// StopReasonYield is the stop reason of a turn the model ended with sessions_yield.
const StopReasonYield = "yield"

// yields says a tool result is a successful sessions_yield: the turn ends after this round
// of tool calls with no further model call. Its record in the transcript (status yielded,
// the children waited for) says the session waits; each child's announce is a turn of its
// own, as for any spawn.
func yields(m *transcript.Message) bool {
	return m.Role == transcript.RoleToolResult && m.ToolName == sessiontools.YieldTool && !m.IsError
}
