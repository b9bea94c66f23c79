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

// ApprovalAction is what a tool approval rule does with the calls it matches.
// +kubebuilder:validation:Enum=require;allow
type ApprovalAction string

const (
	// ApprovalRequire makes a matching call wait for a person's decision.
	ApprovalRequire ApprovalAction = "require"
	// ApprovalAllow runs a matching call at once.
	ApprovalAllow ApprovalAction = "allow"
)

// DefaultApprovalTimeoutSeconds is how long a call waits for a decision when its rule names no timeoutSeconds.
const DefaultApprovalTimeoutSeconds = 600

// ToolApprovalRule says whether the calls of the tools it matches wait for a person.
type ToolApprovalRule struct {
	// tools are globs over the tool names the model sees, e.g. mcp__github__create_* or sessions_send.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	Tools []string `json:"tools"`
	// action is require (the call waits for a decision) or allow.
	// +required
	Action ApprovalAction `json:"action"`
	// timeoutSeconds is how long a call waits for a decision before it is Expired (denied); default 600.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// ApprovalPolicy lists the rules for tool calls that wait for a person; the first matching rule wins and no match allows.
type ApprovalPolicy struct {
	// rules are tried in order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Rules []ToolApprovalRule `json:"rules,omitempty"`
}

// ApprovalDecision is a person's answer to a ToolApproval.
// +kubebuilder:validation:Enum=Approved;Denied
type ApprovalDecision string

const (
	DecisionApproved ApprovalDecision = "Approved"
	DecisionDenied   ApprovalDecision = "Denied"
)

// ApprovalPhase is where a ToolApproval stands.
// +kubebuilder:validation:Enum=Pending;Approved;Denied;Expired
type ApprovalPhase string

const (
	ApprovalPending  ApprovalPhase = "Pending"
	ApprovalApproved ApprovalPhase = "Approved"
	ApprovalDenied   ApprovalPhase = "Denied"
	// ApprovalExpired: no decision came before expiresAt, or the owner was cancelled or deleted; the call is denied.
	ApprovalExpired ApprovalPhase = "Expired"
)

// ConditionDecided says a ToolApproval was decided (Approved, Denied or Expired).
const ConditionDecided = "Decided"

// ConditionAwaitingApproval is True on a SessionSend or SubagentRun while a tool call of its turn waits for a person.
const ConditionAwaitingApproval = "AwaitingApproval"

// VerbApprove on toolapprovals lets a user set spec.decision (grantable per object name).
const VerbApprove = "approve"

// DecidedByAnnotation on a ToolApproval holds the user whose request set spec.decision. The
// mutating webhook writes it from the admission request on that request only, and the
// validating webhook refuses any other change of it, so nobody can type it; the controller
// copies it into status.decidedBy.
const DecidedByAnnotation = "sessions.agents.dev/decided-by"

// MaxApprovalArguments bounds spec.arguments; the full call is in the transcript.
const MaxApprovalArguments = 8 << 10

// ApprovalOwner names the SessionSend or SubagentRun whose turn asked.
type ApprovalOwner struct {
	// kind is SessionSend or SubagentRun.
	// +required
	// +kubebuilder:validation:Enum=SessionSend;SubagentRun
	Kind string `json:"kind"`
	// name is the owner's object name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ApprovalKind is what a ToolApproval asks a person about.
// +kubebuilder:validation:Enum=Tool;Budget
type ApprovalKind string

const (
	// ApprovalKindTool: a tool call a rule says needs a person.
	ApprovalKindTool ApprovalKind = "Tool"
	// ApprovalKindBudget: a send or run tree reached its budget, and the SessionPolicy's
	// budget says onExceeded: Ask; approving allows spec.budget.more.
	ApprovalKindBudget ApprovalKind = "Budget"
)

// BudgetResource is what a budget counts.
// +kubebuilder:validation:Enum=cost;tokens;turns
type BudgetResource string

const (
	BudgetCost   BudgetResource = "cost"
	BudgetTokens BudgetResource = "tokens"
	BudgetTurns  BudgetResource = "turns"
)

// BudgetHolderLabel on a ToolApproval of kind Budget holds the UID of the send or run whose
// budget it asks more of (spec.budget.budgetOf): the budget ledger adds up what was approved
// for it by this label.
const BudgetHolderLabel = "sessions.agents.dev/budget-of"

// BudgetApproval is what a ToolApproval of kind Budget asks: more of one resource for the
// send or run tree that reached its limit.
type BudgetApproval struct {
	// budgetOf is the SessionSend, or the SubagentRun whose run tree, reached its budget: it may be an ancestor of spec.owner.
	// +required
	BudgetOf ApprovalOwner `json:"budgetOf"`
	// resource is what reached its limit: cost, tokens or turns.
	// +required
	Resource BudgetResource `json:"resource"`
	// spent is what the send or run tree had used of the resource when it asked, e.g. "1.00" (cost) or "2000" (tokens).
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]{1,13}(\.[0-9]{1,9})?$`
	Spent string `json:"spent"`
	// limit is the limit it reached, with what was approved before included.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]{1,13}(\.[0-9]{1,9})?$`
	Limit string `json:"limit"`
	// more is what approving allows beyond what was spent (half the budget's own limit): the limit becomes spent plus more.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]{1,13}(\.[0-9]{1,9})?$`
	More string `json:"more"`
	// currency is the cost's currency (the Agents' pricing), for cost.
	// +optional
	// +kubebuilder:validation:MaxLength=8
	Currency string `json:"currency,omitempty"`
	// message is the ask as a person reads it, e.g. "run tree r1 spent 1.00 of 1.00 USD; approve to allow 0.50 more".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message"`
}

// ToolApprovalSpec is one tool call or budget waiting for a person; only decision and reason are set after create, once.
// +kubebuilder:validation:XValidation:rule="(has(self.kind) && self.kind != 'Tool') || has(self.tool)",message="a ToolApproval of kind Tool names its tool"
// +kubebuilder:validation:XValidation:rule="(has(self.kind) && self.kind == 'Budget') == has(self.budget)",message="spec.budget is set on a ToolApproval of kind Budget, and only there"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.decision) || (has(self.decision) && self.decision == oldSelf.decision)",message="decision is set once and never changed"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.decision) || (has(self.reason) == has(oldSelf.reason) && (!has(self.reason) || self.reason == oldSelf.reason))",message="reason is set with the decision and never changed"
// +kubebuilder:validation:XValidation:rule="!has(self.reason) || has(self.decision)",message="a reason needs a decision"
type ToolApprovalSpec struct {
	// kind is what waits: Tool (a tool call a rule requires approval for) or Budget (a send or run tree at its budget, whose SessionPolicy budget says onExceeded: Ask).
	// +optional
	// +kubebuilder:default=Tool
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="kind is immutable"
	Kind ApprovalKind `json:"kind,omitempty"`
	// sessionKey is the session whose turn called the tool.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="sessionKey is immutable"
	SessionKey string `json:"sessionKey"`
	// agentId is the session's agent.
	// +required
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="agentId is immutable"
	AgentID string `json:"agentId"`
	// tool is the full tool name the model sees, e.g. mcp__github__create_issue; set on kind Tool.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="tool is immutable"
	Tool string `json:"tool,omitempty"`
	// arguments are the call's JSON arguments, truncated to 8 KiB; the full call is in the transcript.
	// +optional
	// +kubebuilder:validation:MaxLength=8200
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="arguments are immutable"
	Arguments string `json:"arguments,omitempty"`
	// budget is what an approval of kind Budget asks: more of one resource for a send or run tree.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="budget is immutable"
	Budget *BudgetApproval `json:"budget,omitempty"`
	// owner is the SessionSend or SubagentRun whose turn asked.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="owner is immutable"
	Owner ApprovalOwner `json:"owner"`
	// expiresAt is when an undecided call is Expired (denied).
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="expiresAt is immutable"
	ExpiresAt metav1.Time `json:"expiresAt"`
	// decision is a person's answer, Approved or Denied: set once by a user with the verb approve on toolapprovals, never by the operator.
	// +optional
	Decision ApprovalDecision `json:"decision,omitempty"`
	// reason is the person's reason, given to the model with a denial.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
}

// ToolApprovalStatus is written by the operator.
type ToolApprovalStatus struct {
	// conditions are Decided.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is Pending, Approved, Denied or Expired.
	// +optional
	Phase ApprovalPhase `json:"phase,omitempty"`
	// decidedBy is the user whose request set spec.decision, from the admission request; empty for Expired.
	// +optional
	DecidedBy string `json:"decidedBy,omitempty"`
	// decidedAt is when the operator saw the decision, or expired the call.
	// +optional
	DecidedAt *metav1.Time `json:"decidedAt,omitempty"`
}

// IsBudget says the approval asks about a budget (kind Budget), not a tool call.
func (s *ToolApprovalSpec) IsBudget() bool { return s.Kind == ApprovalKindBudget && s.Budget != nil }

// Decided says the approval reached its end.
func (s *ToolApprovalStatus) Decided() bool {
	return s.Phase == ApprovalApproved || s.Phase == ApprovalDenied || s.Phase == ApprovalExpired
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tap,categories=agent-sessions
// +kubebuilder:selectablefield:JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.kind`
// +kubebuilder:printcolumn:name="Tool",type=string,JSONPath=`.spec.tool`
// +kubebuilder:printcolumn:name="Session",type=string,JSONPath=`.spec.sessionKey`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Decided By",type=string,JSONPath=`.status.decidedBy`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Asks",type=string,JSONPath=`.spec.budget.message`,priority=1

// ToolApproval is one tool call of an agent's turn, or one send's or run tree's budget, that waits for a person's decision.
type ToolApproval struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the approval.
	// +required
	Spec ToolApprovalSpec `json:"spec"`
	// status is written by the operator.
	// +optional
	Status ToolApprovalStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ToolApprovalList is a list of ToolApprovals.
type ToolApprovalList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ToolApproval `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ToolApproval{}, &ToolApprovalList{})
}
