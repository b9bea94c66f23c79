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

package sessiontools

import (
	"context"
	"encoding/json"
	"errors"
)

// YieldTool is sessions_yield's name: the turn engine ends a turn after it succeeds.
const YieldTool = "sessions_yield"

// StatusYielded is sessions_yield's result status.
const StatusYielded = "yielded"

// YieldResult is the sessions_yield result, the transcript's record that the session waits
// for its children: each one's announce starts the session's next turn.
type YieldResult struct {
	Status string `json:"status"`
	// WaitingFor are the session's sends and runs the reader shows in flight; one created in
	// the same round of tool calls may not be listed yet (a cache is read).
	WaitingFor []RunInFlight `json:"waitingFor"`
	Message    string        `json:"message,omitempty"`
}

type yieldArgs struct {
	Message string `json:"message"`
}

func yieldTool() Tool {
	return Tool{Name: YieldTool, SessionOnly: true,
		Description: "End this turn now, with no further model call, and wait: each sub-agent's announced result starts the next turn. Use after spawning work you need the results of.",
		Schema: Schema(map[string]any{
			"message": map[string]any{"type": "string", "description": "a note recorded with the yield"},
		}),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a yieldArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			if c.Session == nil {
				return nil, errors.New("sessions_yield ends a session's turn; this call speaks for no session")
			}
			waiting, err := c.runsInFlight(ctx, c.Session.Spec.Key)
			if err != nil {
				return nil, err
			}
			return YieldResult{Status: StatusYielded, WaitingFor: waiting, Message: a.Message}, nil
		}}
}
