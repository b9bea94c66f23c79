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

package runtime

import (
	"context"
	"errors"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
)

// The session tools land in the next commits; until then they answer with an error result.
func pendingTool(name string, session bool) *tool {
	return &tool{session: session, def: pendingDef(name), run: func(context.Context, *toolCall) (any, error) {
		return nil, errors.New(name + " is not implemented yet")
	}}
}

func listTool() *tool       { return pendingTool("sessions_list", true) }
func historyTool() *tool    { return pendingTool("sessions_history", true) }
func sendTool() *tool       { return pendingTool("sessions_send", true) }
func spawnTool() *tool      { return pendingTool("sessions_spawn", true) }
func agentsListTool() *tool { return pendingTool("agents_list", true) }

func pendingDef(name string) provider.Tool {
	return provider.Tool{Name: name, Parameters: schema(map[string]any{})}
}
