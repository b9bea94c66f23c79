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

// BudgetOnExceeded is what a SessionPolicy's perSend or perRun budget does with work that
// would go over it.
// +kubebuilder:validation:Enum=Fail;Ask
type BudgetOnExceeded string

const (
	// BudgetFail stops the send or run before its next model call (Failed, BudgetExceeded).
	BudgetFail BudgetOnExceeded = "Fail"
	// BudgetAsk pauses the send or run (AwaitingApproval) on a ToolApproval of kind Budget:
	// approved, it goes on with more allowance; denied or expired, it fails as with Fail.
	BudgetAsk BudgetOnExceeded = "Ask"
)

// PolicyBudget is a SessionPolicy's perSend or perRun budget: the limits every send or run
// tree gets (and the most its own spec.budget may ask), and what happens at them.
// +kubebuilder:validation:XValidation:rule="!has(self.onExceeded) || self.onExceeded != 'Ask' || has(self.maxCost) || has(self.maxTokens) || has(self.maxTurns)",message="onExceeded: Ask needs a limit to ask about: set maxCost, maxTokens or maxTurns"
// +kubebuilder:validation:XValidation:rule="!has(self.askTimeoutSeconds) || (has(self.onExceeded) && self.onExceeded == 'Ask')",message="askTimeoutSeconds is how long an ask waits for a person: it needs onExceeded: Ask"
type PolicyBudget struct {
	Budget `json:",inline"`
	// onExceeded is what happens when a send or run tree would go over the budget: Fail (the default) stops it; Ask pauses it AwaitingApproval on a ToolApproval of kind Budget that allows half the limit more when approved (a limit a caller carried over A2A or MCP is never asked about).
	// +optional
	OnExceeded BudgetOnExceeded `json:"onExceeded,omitempty"`
	// askTimeoutSeconds is how long an ask waits for a decision before it expires and the work fails; default 600.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	AskTimeoutSeconds *int32 `json:"askTimeoutSeconds,omitempty"`
}

// Limits is the budget's limits alone; nil for a nil budget.
func (p *PolicyBudget) Limits() *Budget {
	if p == nil {
		return nil
	}
	return &p.Budget
}

// Asks says the budget asks a person instead of failing.
func (p *PolicyBudget) Asks() bool { return p != nil && p.OnExceeded == BudgetAsk }

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
	PerSend *PolicyBudget `json:"perSend,omitempty"`
	// perRun is each SubagentRun tree's budget (the run and every run its child spawned) and the most its spec.budget may ask.
	// +optional
	PerRun *PolicyBudget `json:"perRun,omitempty"`
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
