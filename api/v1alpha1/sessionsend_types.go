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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SendStatus is the result status of sessions_send in the session-tools specification.
// +kubebuilder:validation:Enum=accepted;ok;timeout;error
type SendStatus string

const (
	SendAccepted SendStatus = "accepted"
	SendOK       SendStatus = "ok"
	SendTimeout  SendStatus = "timeout"
	SendError    SendStatus = "error"
)

// DefaultSendTimeoutSeconds is spec.timeoutSeconds when unset (the CRD default says the same).
const DefaultSendTimeoutSeconds = 30

// MaxSendTimeoutSeconds is the one bound of a send's wait at every door: the CRDs (a send's,
// a schedule's and a hook's timeoutSeconds), kubectl, the sessions_send tool, /mcp and A2A.
// A longer wait is a fire-and-forget send followed (sessions_history, MCP tasks, A2A tasks).
const MaxSendTimeoutSeconds = 600

// SendPhase is the step a send is in.
// +kubebuilder:validation:Enum=Pending;Running;AwaitingApproval;ReplyBack;Announcing;Completed;Failed;Cancelled
type SendPhase string

const (
	SendPending SendPhase = "Pending"
	SendRunning SendPhase = "Running"
	// SendAwaitingApproval: a tool call of the send's turn waits for a person (a ToolApproval).
	SendAwaitingApproval SendPhase = "AwaitingApproval"
	SendReplyBack        SendPhase = "ReplyBack"
	SendAnnouncing       SendPhase = "Announcing"
	SendCompleted        SendPhase = "Completed"
	SendFailed           SendPhase = "Failed"
	SendCancelled        SendPhase = "Cancelled"
)

// SessionSendSpec is a sessions_send call. It cannot change once created, but for cancel:
// each field says so itself (self == oldSelf), and the rules here catch an optional field
// added or removed, which a field's own transition rule does not see.
// Atomic: a client's create owns the spec as one field set, so its managedFields entry is
// "f:spec":{} and not one entry per field (a merge patch of cancel works as before; a
// server-side apply states the whole spec).
// +structType=atomic
// +kubebuilder:validation:XValidation:rule="has(self.timeoutSeconds) == has(oldSelf.timeoutSeconds)",message="spec is immutable but for cancel; create a new SessionSend"
// +kubebuilder:validation:XValidation:rule="has(self.fromSessionKey) == has(oldSelf.fromSessionKey)",message="spec is immutable but for cancel; create a new SessionSend"
// +kubebuilder:validation:XValidation:rule="has(self.ttlSecondsAfterFinished) == has(oldSelf.ttlSecondsAfterFinished)",message="spec is immutable but for cancel; create a new SessionSend"
// +kubebuilder:validation:XValidation:rule="has(self.budget) == has(oldSelf.budget)",message="spec.budget is immutable; create a new SessionSend"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.cancel) && self.cancel)",message="spec.cancel cannot go back to false"
type SessionSendSpec struct {
	// sessionKey is the target: a session key, a sessionId, or main (the main session of the requester's agent).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SessionSend"
	SessionKey string `json:"sessionKey"`

	// message is the text delivered into the target session.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SessionSend"
	Message string `json:"message"`

	// timeoutSeconds is how long the send waits for the target's reply before it reports timeout (the run goes on): 0 to 600 seconds, default 30.
	// 0 is fire-and-forget: status accepted at once. Whole seconds: a fraction is refused, never cut to 0.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=600
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SessionSend"
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// fromSessionKey is the requesting session; empty when a person or a system sends.
	// When set and different from the target, the reply-back ping-pong runs.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SessionSend"
	FromSessionKey string `json:"fromSessionKey,omitempty"`

	// cancel stops the send: its running turns are aborted, it ends in phase Cancelled, and the runs and sends its target session started are cancelled too.
	// It may go from false to true only; it is the one field that changes after create.
	// +optional
	Cancel bool `json:"cancel,omitempty"`

	// ttlSecondsAfterFinished deletes the send that long after it finished, as a Job's does; unset takes the operator's default (the manager's --ttl-after-finished).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SessionSend"
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// budget bounds all the send's turns; unset fields take the SessionPolicy's spec.budgets.perSend, and none may be above it.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.budget is immutable; create a new SessionSend"
	Budget *Budget `json:"budget,omitempty"`
}

// SendTurn is one turn of a send: round 1 in the target, then the reply-back rounds.
type SendTurn struct {
	// round is 1 for the primary run, 2.. for ping-pong turns.
	// +required
	Round int32 `json:"round"`
	// session is the key of the session the turn ran in.
	// +required
	Session string `json:"session"`
	// reply is the turn's final text: its first 8 KiB.
	// +optional
	Reply string `json:"reply,omitempty"`
	// replySeq is set when reply was cut to its first 8 KiB: the transcript record of session that holds the whole reply, which the next turn and the announce read (up to 256 KiB).
	// +optional
	// +kubebuilder:validation:Minimum=1
	ReplySeq int64 `json:"replySeq,omitempty"`
	// skipped is true when the reply was exactly REPLY_SKIP or empty, ending the ping-pong.
	// +optional
	Skipped bool `json:"skipped,omitempty"`
	// error is set when the turn failed.
	// +optional
	Error string `json:"error,omitempty"`
}

// SessionSendStatus is the sessions_send result of the session-tools specification plus
// the steps after it. Atomic: its one writer is the send's controller, so the API server
// records one field set for the whole status instead of one per field and condition
// (about a third of a finished send's bytes; docs/operations/scaling.md).
// +structType=atomic
type SessionSendStatus struct {
	// conditions are Replied (round 1 ended); at the end one of Completed (every step ended
	// well), Failed or Cancelled. For GitOps tools (kstatus): Reconciling while the send works,
	// Stalled once it failed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions  []metav1.Condition `json:"conditions,omitempty"`
	OwnerStatus `json:",inline"`
	// runId identifies the primary run.
	// +optional
	RunID string `json:"runId,omitempty"`
	// status is accepted, ok, timeout or error, as sessions_send returns it.
	// +optional
	Status SendStatus `json:"status,omitempty"`
	// reply is round 1's reply (status ok, or a late reply after timeout): its first 8 KiB.
	// sessions_send, /mcp and A2A return it whole (up to 256 KiB) from the transcript when replyTruncated is set.
	// +optional
	Reply string `json:"reply,omitempty"`
	// replyTruncated says reply is cut to its first 8 KiB; turns[0].replySeq is the transcript record of the whole reply.
	// +optional
	ReplyTruncated bool `json:"replyTruncated,omitempty"`
	// error explains timeout and error.
	// +optional
	Error string `json:"error,omitempty"`
	// phase is the step the send is in.
	// +optional
	Phase SendPhase `json:"phase,omitempty"`
	// targetSessionKey is the resolved target key when spec.sessionKey named the target otherwise (main, a sessionId).
	// It is unset when spec.sessionKey is the key itself: the target is then spec.sessionKey once runId is set.
	// +optional
	TargetSessionKey string `json:"targetSessionKey,omitempty"`
	// turns are the turns run so far, in order.
	// +optional
	// +listType=atomic
	Turns []SendTurn `json:"turns,omitempty"`
	// announce is the outcome of the announce step in the target.
	// +optional
	Announce *Announce `json:"announce,omitempty"`
	// usage adds up every turn of the send: round 1, the ping-pong turns on both sides, and the announce step.
	// +optional
	Usage *Usage `json:"usage,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ssend,categories=agent-sessions
// +kubebuilder:selectablefield:JSONPath=`.status.phase`
// +kubebuilder:selectablefield:JSONPath=`.spec.sessionKey`
// +kubebuilder:selectablefield:JSONPath=`.status.targetSessionKey`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.sessionKey`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.status`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Reply",type=string,JSONPath=`.status.reply`
// +kubebuilder:printcolumn:name="From",type=string,JSONPath=`.spec.fromSessionKey`,priority=1
// +kubebuilder:printcolumn:name="Announce",type=string,JSONPath=`.status.announce.status`,priority=1
// +kubebuilder:printcolumn:name="Error",type=string,JSONPath=`.status.error`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// SessionSend sends a message into a session, as the sessions_send tool does.
type SessionSend struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the send.
	// +required
	Spec SessionSendSpec `json:"spec"`
	// status is written by the operator; its observedGeneration reads 0 until the operator has seen the object, so GitOps tools (kstatus, Argo CD) do not take a new object for reconciled.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status SessionSendStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SessionSendList is a list of SessionSends.
type SessionSendList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SessionSend `json:"items"`
}

// TargetKey is the key of the session the send runs in, once resolved: status.targetSessionKey
// when spec.sessionKey named the target otherwise (main, a sessionId), spec.sessionKey when it
// is the key itself (SetTargetKey leaves the status field out then), and "" while unresolved
// (no runId: the runId is recorded with the target).
func (s *SessionSend) TargetKey() string {
	switch {
	case s.Status.TargetSessionKey != "":
		return s.Status.TargetSessionKey
	case s.Status.RunID != "":
		return s.Spec.SessionKey
	}
	return ""
}

// TargetRef is TargetKey, or spec.sessionKey as written while the send is unresolved: the
// session a reader files the send under.
func (s *SessionSend) TargetRef() string {
	if k := s.TargetKey(); k != "" {
		return k
	}
	return s.Spec.SessionKey
}

// SetTargetKey records the resolved target key: status.targetSessionKey only when it differs
// from spec.sessionKey (it is the key itself for most sends, and about 50 bytes of each).
// The caller records the runId in the same write (TargetKey reads it).
func (s *SessionSend) SetTargetKey(key string) {
	s.Status.TargetSessionKey = ""
	if key != s.Spec.SessionKey {
		s.Status.TargetSessionKey = key
	}
}

func init() {
	SchemeBuilder.Register(&SessionSend{}, &SessionSendList{})
}
