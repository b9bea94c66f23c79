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
	"time"

	"k8s.io/utils/clock"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
)

// budgetGate refuses new sends and spawns once the namespace's budget window is spent (as
// the SessionPolicy's status.spend records it) and spec.budgets that ask more than the
// policy's: budget.Admit decides.
type budgetGate struct {
	clock clock.PassiveClock
}

// judgeBudget is why a new send (perRun false) or run may not start, or "". pol may be nil.
func (g budgetGate) judgeBudget(pol *sessionsv1alpha1.SessionPolicy, own *sessionsv1alpha1.Budget, perRun bool) string {
	return budget.Admit(pol, own, perRun, g.now())
}

func (g budgetGate) now() time.Time {
	if g.clock == nil {
		return clock.RealClock{}.Now()
	}
	return g.clock.Now()
}
