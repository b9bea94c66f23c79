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

package sandbox

import "context"

// AcquirePhase is a step of Acquire's path to a ready sandbox, which a caller may time
// (the bench's breakdown of a warm claim: what agent-sandbox takes, what the manager adds).
type AcquirePhase string

const (
	// PhaseClaimed: the session's SandboxClaim exists (made by this call or found).
	PhaseClaimed AcquirePhase = "claimed"
	// PhaseBound: the claim names its Sandbox (agent-sandbox bound it, from the warm pool
	// when one waited).
	PhaseBound AcquirePhase = "bound"
	// PhaseReady: the claim and its Sandbox are Ready as the manager's cache shows them.
	PhaseReady AcquirePhase = "ready"
	// PhaseConnected: a port-forward to the sandbox's Pod connected.
	PhaseConnected AcquirePhase = "connected"
	// PhaseServing: sandboxd answered its health check through it.
	PhaseServing AcquirePhase = "serving"
)

type phasesKey struct{}

// WithPhases returns ctx whose Acquire calls observe each phase as it is reached (a phase
// may be observed more than once: the first is the one to time). observe must not block.
func WithPhases(ctx context.Context, observe func(AcquirePhase)) context.Context {
	return context.WithValue(ctx, phasesKey{}, observe)
}

// phases is ctx's observer, a no-op when it has none.
func phases(ctx context.Context) func(AcquirePhase) {
	if observe, ok := ctx.Value(phasesKey{}).(func(AcquirePhase)); ok {
		return observe
	}
	return func(AcquirePhase) {}
}
