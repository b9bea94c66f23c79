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

// Channel is a messaging surface as the session-tools specification names it.
// +kubebuilder:validation:Enum=whatsapp;telegram;discord;slack;signal;imessage;webchat;internal;unknown
type Channel string

// SessionKind is derived from the session key.
// +kubebuilder:validation:Enum=main;group;cron;hook;node;other
type SessionKind string

// SessionPhase is the lifecycle of a session.
// +kubebuilder:validation:Enum=Active;Archived
type SessionPhase string

const (
	SessionActive   SessionPhase = "Active"
	SessionArchived SessionPhase = "Archived"
)

// AgentSessionSpec describes one conversation.
// +kubebuilder:validation:XValidation:rule="!has(self.parentSessionKey) || has(self.spawnedBy)",message="parentSessionKey requires spawnedBy"
type AgentSessionSpec struct {
	// key is the session key, e.g. agent:main:main, agent:main:discord:group:123, cron:nightly, hook:<uuid>, node-<id> or agent:<agentId>:subagent:<uuid>.
	// It is unique in the namespace and cannot change.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.key is immutable"
	Key string `json:"key"`

	// agentId is the Agent that answers in this session.
	// +required
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9_-]{0,63}$`
	AgentID string `json:"agentId"`

	// channel is the messaging surface the session lives on; unset means unknown.
	// The send policy judges it: a key that names a channel decides it, and setting or changing it otherwise needs the verb set-send-policy (the relabelling rule).
	// +optional
	Channel Channel `json:"channel,omitempty"`

	// chatType is direct, group or room.
	// The send policy judges it: a key that names a chat type decides it, and setting or changing it otherwise needs the verb set-send-policy (the relabelling rule).
	// +optional
	ChatType ChatType `json:"chatType,omitempty"`

	// displayName is a label for people, e.g. the group's name.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DisplayName string `json:"displayName,omitempty"`

	// label is a short free-form tag used in logs and UIs.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Label string `json:"label,omitempty"`

	// model overrides the Agent's model for this session.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model,omitempty"`

	// thinkingLevel is how much the model reasons before it answers (off, minimal, low, medium, high, xhigh); unset leaves the provider's default.
	// +optional
	ThinkingLevel ThinkingLevel `json:"thinkingLevel,omitempty"`

	// verboseLevel controls how much tool output the session shows.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	VerboseLevel string `json:"verboseLevel,omitempty"`

	// sendPolicy overrides the namespace SessionPolicy for sends into this session: allow or deny; unset inherits.
	// Setting or changing it needs the verb set-send-policy on this session (the agent-sessions-send-admin ClusterRole), whatever the write verb.
	// +optional
	SendPolicy Action `json:"sendPolicy,omitempty"`

	// deliveryContext is where announces for this session are delivered; delivery judges that chat by the send policy.
	// Setting or changing it needs the verb set-send-policy (the relabelling rule).
	// +optional
	DeliveryContext *DeliveryContext `json:"deliveryContext,omitempty"`

	// lastChannel is the channel of the last inbound message (direct chats).
	// Setting or changing it needs the verb set-send-policy (the relabelling rule).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	LastChannel string `json:"lastChannel,omitempty"`

	// lastTo is the recipient of the last outbound message; announces go there when deliveryContext is unset.
	// Setting or changing it needs the verb set-send-policy (the relabelling rule).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	LastTo string `json:"lastTo,omitempty"`

	// spawnedBy is the key of the session that spawned this one (sub-agents only).
	// Only the manager sets it.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	SpawnedBy string `json:"spawnedBy,omitempty"`

	// parentSessionKey is the requester session of a sub-agent run.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ParentSessionKey string `json:"parentSessionKey,omitempty"`

	// sandboxed marks a session whose tools run in a sandbox; session tools then default to spawned-only visibility.
	// +optional
	Sandboxed bool `json:"sandboxed,omitempty"`
}

// AgentSessionStatus is what the manager knows of a session; the transcript itself stays in the transcript store.
// Atomic: its one writer is the session's controller, so the API server records one field
// set for the whole status instead of one per field and condition.
// +structType=atomic
type AgentSessionStatus struct {
	// conditions are Ready once the transcript exists (Stalled instead when the key is invalid);
	// Archived instead of Ready once the session is archived.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// sessionId is the transcript's id (a UUID); sessions resolve by it too.
	// +optional
	SessionID string `json:"sessionId,omitempty"`
	// kind is derived from the key: main, group, cron, hook, node or other.
	// +optional
	Kind SessionKind `json:"kind,omitempty"`
	// channel is the effective channel (internal for cron/hook/node, unknown if missing).
	// +optional
	Channel string `json:"channel,omitempty"`
	// phase is Active or Archived.
	// +optional
	Phase SessionPhase `json:"phase,omitempty"`
	// updatedAt is when the transcript last changed; its creation time until the first message.
	// +optional
	UpdatedAt *metav1.Time `json:"updatedAt,omitempty"`
	// messageCount is the number of transcript messages; default 0, so a new session's column reads 0.
	// +optional
	// +kubebuilder:default=0
	MessageCount int64 `json:"messageCount,omitempty"`
	// lastMessagePreview is the start of the last user or assistant text.
	// +optional
	LastMessagePreview string `json:"lastMessagePreview,omitempty"`
	// inputTokens is the input tokens of the session's turns so far.
	// +optional
	InputTokens int64 `json:"inputTokens,omitempty"`
	// outputTokens is the output tokens of the session's turns so far.
	// +optional
	OutputTokens int64 `json:"outputTokens,omitempty"`
	// totalTokens is inputTokens plus outputTokens.
	// +optional
	TotalTokens int64 `json:"totalTokens,omitempty"`
	// usage is every turn of the session added up, priced with each turn's Agent pricing.
	// +optional
	Usage *Usage `json:"usage,omitempty"`
	// contextTokens is the size of the context window used by the last turn.
	// +optional
	ContextTokens int64 `json:"contextTokens,omitempty"`
	// systemSent says the system prompt was sent in this session.
	// +optional
	SystemSent bool `json:"systemSent,omitempty"`
	// abortedLastRun says the last turn was interrupted (deadline or abort).
	// +optional
	AbortedLastRun bool `json:"abortedLastRun,omitempty"`
	// transcriptPath is where the transcript lives on the store's volume.
	// +optional
	TranscriptPath string `json:"transcriptPath,omitempty"`
	// activeRunId is the turn running in the session now, if any.
	// +optional
	ActiveRunID string `json:"activeRunId,omitempty"`
	// archiveAt is when a sub-agent session will be archived.
	// +optional
	ArchiveAt *metav1.Time `json:"archiveAt,omitempty"`
	// compactions is how many compaction records the transcript holds.
	// +optional
	Compactions int64 `json:"compactions,omitempty"`
	// lastCompactedAt is when the latest compaction record was appended.
	// +optional
	LastCompactedAt *metav1.Time `json:"lastCompactedAt,omitempty"`
	// sandbox is the agent-sandbox Sandbox a sandboxed session's tools run in, once its first tool call claimed one.
	// +optional
	Sandbox *SessionSandboxStatus `json:"sandbox,omitempty"`
}

// SandboxPhase is where a session's sandbox is in its life.
// +kubebuilder:validation:Enum=Claimed;Ready;Suspended;Failed
type SandboxPhase string

const (
	// SandboxClaimed: the SandboxClaim exists; its Sandbox is starting.
	SandboxClaimed SandboxPhase = "Claimed"
	// SandboxReady: the Sandbox's Pod runs and takes tool calls.
	SandboxReady SandboxPhase = "Ready"
	// SandboxSuspended: idle past idleSeconds, the Pod is gone and the workspace kept; the next tool call resumes it.
	SandboxSuspended SandboxPhase = "Suspended"
	// SandboxFailed: the Sandbox cannot start; the message says why.
	SandboxFailed SandboxPhase = "Failed"
)

// SessionSandboxStatus is a session's claim on a sandbox.
type SessionSandboxStatus struct {
	// claim is the SandboxClaim's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Claim string `json:"claim"`
	// sandbox is the Sandbox's name, once the claim is bound.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Sandbox string `json:"sandbox,omitempty"`
	// phase is Claimed, Ready, Suspended or Failed.
	// +optional
	Phase SandboxPhase `json:"phase,omitempty"`
	// runtimeClassName is the RuntimeClass the sandbox runs with; empty is the node's default runtime.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	RuntimeClassName string `json:"runtimeClassName,omitempty"`
	// lastUsed is when a tool call last ran in the sandbox; idleSeconds count from it.
	// +optional
	LastUsed *metav1.Time `json:"lastUsed,omitempty"`
	// message says why the sandbox failed.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=as,categories=agent-sessions
// +kubebuilder:selectablefield:JSONPath=`.spec.key`
// +kubebuilder:selectablefield:JSONPath=`.status.sessionId`
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=`.spec.key`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.status.kind`
// +kubebuilder:printcolumn:name="Channel",type=string,JSONPath=`.status.channel`
// +kubebuilder:printcolumn:name="Messages",type=integer,JSONPath=`.status.messageCount`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,priority=1
// +kubebuilder:printcolumn:name="Agent",type=string,JSONPath=`.spec.agentId`,priority=1
// +kubebuilder:printcolumn:name="Updated",type=date,JSONPath=`.status.updatedAt`

// AgentSession is one conversation of an agent: its key, routing and counters.
type AgentSession struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the session.
	// +required
	Spec AgentSessionSpec `json:"spec"`
	// status is written by the operator; its observedGeneration reads 0 until the operator has seen the object, so GitOps tools (kstatus, Argo CD) do not take a new object for reconciled.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status AgentSessionStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AgentSessionList is a list of AgentSessions.
type AgentSessionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentSession `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AgentSession{}, &AgentSessionList{})
}
