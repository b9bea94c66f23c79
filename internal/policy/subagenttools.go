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

import "slices"

// SpawnToolName is the session tool a sub-agent is never offered: no sub-agent spawns.
const SpawnToolName = "sessions_spawn"

// SubagentOffers says whether a sub-agent session is offered the tool name (sessionTool
// marks the session tools). With no subagents.tools (allow) it gets every non-session tool,
// the specification's default; a list offers what it names, session tools included (say
// sessions_history, which still answers within the sub-agent's visibility, clamped when it
// is sandboxed, and sends stay under the send policy and admission), except sessions_spawn.
func SubagentOffers(allow []string, name string, sessionTool bool) bool {
	if name == SpawnToolName {
		return false
	}
	if len(allow) == 0 {
		return !sessionTool
	}
	return slices.Contains(allow, name)
}

// SubagentSessionTools are the session tools among sessionTools (their names, in order)
// that a sub-agent whose Agent lists allow in subagents.tools is offered: what its task's
// context tells it it has.
func SubagentSessionTools(allow, sessionTools []string) []string {
	var out []string
	for _, name := range sessionTools {
		if SubagentOffers(allow, name, true) {
			out = append(out, name)
		}
	}
	return out
}
