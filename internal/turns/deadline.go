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
	"context"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// DefaultTurnTimeout bounds a turn of an Agent that sets no spec.turnTimeoutSeconds (the CRD
// defaults the field to the same value): no turn holds a slot and its session's lane forever.
const DefaultTurnTimeout = 10 * time.Minute

// turnTimeout is how long one turn of agent may run, model and tool calls included.
func turnTimeout(agent *sessionsv1alpha1.Agent) time.Duration {
	if s := agent.Spec.TurnTimeoutSeconds; s != nil && *s > 0 {
		return time.Duration(*s) * time.Second
	}
	return DefaultTurnTimeout
}

// withTurnDeadline derives the context of a running turn that ends with ErrDeadline after
// the agent's turn timeout, on the engine's clock; stop releases its timer.
func (e *Engine) withTurnDeadline(ctx context.Context, agent *sessionsv1alpha1.Agent) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stopTimer := e.cancelAfter(cancel, turnTimeout(agent))
	return ctx, func() { stopTimer(); cancel(nil) }
}
