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

package budget

import (
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// Admit is the admission check of a new send (perRun false) or run: why it may not be
// created under pol, or "". It refuses a spec.budget above the policy's perSend or perRun,
// and any new work once the namespace's window is spent as pol's status.spend records it
// (the SessionPolicy controller writes it from the ledger every few seconds). pol may be nil.
func Admit(pol *sessionsv1alpha1.SessionPolicy, own *sessionsv1alpha1.Budget, perRun bool, now time.Time) string {
	if pol == nil || pol.Spec.Budgets == nil {
		return ""
	}
	b := pol.Spec.Budgets
	ceiling, field := b.PerSend, "perSend"
	if perRun {
		ceiling, field = b.PerRun, "perRun"
	}
	if why := usage.AbovePolicy(own, ceiling.Limits(), field); why != "" {
		return why
	}
	return usage.NamespaceSpent(b.Namespace, usage.WindowSpent(b.Namespace, pol.Status.Spend, now), now)
}
