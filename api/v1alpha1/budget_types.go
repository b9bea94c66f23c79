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

package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Budget bounds what one send (all its turns) or one run tree (the run and every run its
// child spawned, whatever the depth) may use. Cost is in the Agents' pricing currency; an
// Agent without pricing counts tokens only.
type Budget struct {
	// maxCost is the most the send or run tree may cost, a decimal string like the Agents' prices (e.g. "1", "0.25"), in their pricing currency.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,9}(\.[0-9]{1,9})?$`
	MaxCost string `json:"maxCost,omitempty"`
	// maxTokens is the most input plus output tokens the send or run tree may use.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000000
	MaxTokens *int64 `json:"maxTokens,omitempty"`
	// maxTurns is the most turns the send (round 1, ping-pong turns) or the run tree (each run's task) may run; the announce step is not counted.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	MaxTurns *int32 `json:"maxTurns,omitempty"`
}

// NamespaceBudget bounds what every turn of the namespace may spend in one window.
// +kubebuilder:validation:XValidation:rule="has(self.maxCost) || has(self.maxTokens)",message="a namespace budget needs maxCost or maxTokens"
// +kubebuilder:validation:XValidation:rule="duration(self.window) >= duration('1m') && duration(self.window) <= duration('8784h')",message="window must be between 1m and 8784h (a leap year)"
type NamespaceBudget struct {
	// window is the length of a spend window, e.g. 24h. Windows are aligned on multiples of it since the Unix epoch (24h windows reset at 00:00 UTC).
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(s|m|h))+$`
	Window metav1.Duration `json:"window"`
	// maxCost is the most the namespace's turns may cost in one window, a decimal string in the Agents' pricing currency.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,9}(\.[0-9]{1,9})?$`
	MaxCost string `json:"maxCost,omitempty"`
	// maxTokens is the most input plus output tokens the namespace's turns may use in one window.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000000000
	MaxTokens *int64 `json:"maxTokens,omitempty"`
}

// Budgets are a namespace's spend limits: the namespace's per window, and the defaults (and
// ceilings) of each send and each run tree. A send's or run's own spec.budget may lower its
// default, never raise it.
type Budgets struct {
	// namespace bounds the spend of all the namespace's turns per window; once reached, new sends and spawns are refused until the window resets, and running ones stop before their next model call.
	// +optional
	Namespace *NamespaceBudget `json:"namespace,omitempty"`
	// perSend is each SessionSend's budget (all its turns) and the most its spec.budget may ask.
	// +optional
	PerSend *Budget `json:"perSend,omitempty"`
	// perRun is each SubagentRun tree's budget (the run and every run its child spawned) and the most its spec.budget may ask.
	// +optional
	PerRun *Budget `json:"perRun,omitempty"`
}

// Spend is what the namespace's turns used in the current budget window.
type Spend struct {
	// windowStart is when the current window began.
	// +optional
	WindowStart *metav1.Time `json:"windowStart,omitempty"`
	// cost is the window's priced usage, a decimal string in the Agents' pricing currency.
	// +optional
	Cost string `json:"cost,omitempty"`
	// tokens are the window's input plus output tokens.
	// +optional
	Tokens int64 `json:"tokens,omitempty"`
}

// ReasonBudgetExceeded is the reason of the Failed condition of a send or run stopped by a
// budget.
const ReasonBudgetExceeded = "BudgetExceeded"
