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

// SpawnMode is run (one task) or session (a thread-bound session that stays).
// +kubebuilder:validation:Enum=run;session
type SpawnMode string

const (
	ModeRun     SpawnMode = "run"
	ModeSession SpawnMode = "session"
)

// SpawnContext is what the child starts from: isolated (nothing but its task) or fork (the
// requester's recent conversation, then its task).
// +kubebuilder:validation:Enum=isolated;fork
type SpawnContext string

const (
	ContextIsolated SpawnContext = "isolated"
	ContextFork     SpawnContext = "fork"
)

// Cleanup says what happens to the child session after the announce.
// +kubebuilder:validation:Enum=delete;keep
type Cleanup string

const (
	CleanupDelete Cleanup = "delete"
	CleanupKeep   Cleanup = "keep"
)

// SandboxMode is inherit or require.
// +kubebuilder:validation:Enum=inherit;require
type SandboxMode string

const (
	SandboxInherit SandboxMode = "inherit"
	SandboxRequire SandboxMode = "require"
)

// AttachmentEncoding is how an attachment's content is written.
// +kubebuilder:validation:Enum=utf8;base64
type AttachmentEncoding string

const (
	EncodingUTF8   AttachmentEncoding = "utf8"
	EncodingBase64 AttachmentEncoding = "base64"
)

// RunPhase is the lifecycle of a sub-agent run.
// +kubebuilder:validation:Enum=Pending;Running;AwaitingApproval;Succeeded;Failed;TimedOut;Cancelled
type RunPhase string

const (
	RunPending RunPhase = "Pending"
	RunRunning RunPhase = "Running"
	// RunAwaitingApproval: a tool call of the child's turn waits for a person (a ToolApproval).
	RunAwaitingApproval RunPhase = "AwaitingApproval"
	RunSucceeded        RunPhase = "Succeeded"
	RunFailed           RunPhase = "Failed"
	RunTimedOut         RunPhase = "TimedOut"
	RunCancelled        RunPhase = "Cancelled"
)

// Attachment is an inline file for the child's workspace.
type Attachment struct {
	// name is the file name; no path separators, not . or ..
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`
	// content is the file's content, encoded as encoding says (1 MiB decoded at most).
	// +required
	// +kubebuilder:validation:MaxLength=1398104
	Content string `json:"content"`
	// encoding is utf8 (default) or base64.
	// +optional
	// +kubebuilder:default=utf8
	Encoding AttachmentEncoding `json:"encoding,omitempty"`
	// mimeType is recorded in the manifest.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	MimeType string `json:"mimeType,omitempty"`
}

// SubagentRunSpec is a sessions_spawn call. It cannot change once created, but for cancel:
// each field says so itself (self == oldSelf), and the rules here catch an optional field
// added or removed, which a field's own transition rule does not see.
// +kubebuilder:validation:XValidation:rule="has(self.label) == has(oldSelf.label)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.agentId) == has(oldSelf.agentId)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.model) == has(oldSelf.model)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.thinking) == has(oldSelf.thinking)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.runTimeoutSeconds) == has(oldSelf.runTimeoutSeconds)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.thread) == has(oldSelf.thread)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.mode) == has(oldSelf.mode)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.cleanup) == has(oldSelf.cleanup)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.sandbox) == has(oldSelf.sandbox)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.attachments) == has(oldSelf.attachments)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.requesterSessionKey) == has(oldSelf.requesterSessionKey)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.ttlSecondsAfterFinished) == has(oldSelf.ttlSecondsAfterFinished)",message="spec is immutable but for cancel; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="has(self.budget) == has(oldSelf.budget)",message="spec.budget is immutable; create a new SubagentRun"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.cancel) && self.cancel)",message="spec.cancel cannot go back to false"
// +kubebuilder:validation:XValidation:rule="!has(self.mode) || self.mode != 'session' || (has(self.thread) && self.thread)",message="mode session requires thread: true"
type SubagentRunSpec struct {
	// task is what the sub-agent is asked to do.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	Task string `json:"task"`
	// label is used in logs and UIs.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	Label string `json:"label,omitempty"`
	// agentId spawns under another agent, if the requester's agent allows it; default the requester's agent, or for a spawn without a requester the namespace's default agent (SessionPolicy spec.defaultAgentId, else its only Agent).
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9_-]{0,63}$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	AgentID string `json:"agentId,omitempty"`
	// model overrides the sub-agent's model. Any model is accepted unless the target Agent's allowedModels narrows the choice (to its own model and those listed); a model the provider refuses ends the run failed, its notes naming the model.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	Model string `json:"model,omitempty"`
	// thinking overrides the thinking level for the run (off, minimal, low, medium, high, xhigh).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	Thinking ThinkingLevel `json:"thinking,omitempty"`
	// runTimeoutSeconds aborts the run after N seconds; unset takes the Agent's subagents.runTimeoutSeconds, 0 means no limit.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	RunTimeoutSeconds *int32 `json:"runTimeoutSeconds,omitempty"`
	// thread requests thread-bound routing where the channel supports it.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	Thread bool `json:"thread,omitempty"`
	// mode is run or session; it defaults to session when thread is true, else run.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	Mode SpawnMode `json:"mode,omitempty"`
	// cleanup deletes (delete) or archives after a while (keep, the default) the child after the announce.
	// +optional
	// +kubebuilder:default=keep
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	Cleanup Cleanup `json:"cleanup,omitempty"`
	// sandbox is inherit (the default), which runs the child as the requester's sandbox setting says; require rejects the spawn unless the child runs sandboxed.
	// +optional
	// +kubebuilder:default=inherit
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	Sandbox SandboxMode `json:"sandbox,omitempty"`
	// attachments are files materialized into the child's workspace, one per name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	Attachments []Attachment `json:"attachments,omitempty"`
	// attachAs says where the attachments appear in the child's workspace.
	// In a sandboxed child (its Agent has spec.sandbox.enabled and the manager runs sandboxes) the files and their manifest are written into the child's sandbox workspace at /workspace/<mountPath>, or /workspace/.agents/attachments/<uuid>/ without one.
	// An unsandboxed child has no sandbox: its files land in .agents/attachments/<uuid>/ of its workspace and mountPath is only recorded and shown in its task message.
	// +optional
	AttachAs *AttachAs `json:"attachAs,omitempty"`
	// context is isolated (the default: the child starts with its task alone) or fork (the child's transcript starts with the requester's recent conversation, without tool calls and results); fork needs a requester and runs under the requester's own agent.
	// +optional
	Context SpawnContext `json:"context,omitempty"`
	// requesterSessionKey is the session that asked; the announce runs there.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	RequesterSessionKey string `json:"requesterSessionKey,omitempty"`
	// cancel stops the run: its task is aborted, it ends in phase Cancelled and still announces (Status: cancelled), and the runs and sends its child session started are cancelled too.
	// It may go from false to true only; it is the one field that changes after create.
	// +optional
	Cancel bool `json:"cancel,omitempty"`
	// ttlSecondsAfterFinished deletes the run that long after it finished (and after its kept child was archived), as a Job's does; unset takes the operator's default (the manager's --ttl-after-finished).
	// The kept child session stays.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable but for cancel; create a new SubagentRun"
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// budget bounds the run tree (the run and every run its child spawned); unset fields take the SessionPolicy's spec.budgets.perRun, and none may be above it.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.budget is immutable; create a new SubagentRun"
	Budget *Budget `json:"budget,omitempty"`
}

// AttachAs is the attachAs of sessions_spawn: where a sandboxed child finds its attachments.
type AttachAs struct {
	// mountPath is a relative path inside the child's workspace, e.g. inputs/data: no leading /, no .. element.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	MountPath string `json:"mountPath,omitempty"`
}

// RunStats is the stats line of an announce.
type RunStats struct {
	// runtime is how long the run took, e.g. 3.2s.
	// +optional
	Runtime string `json:"runtime,omitempty"`
	// inputTokens is the input tokens of the child's turns.
	// +optional
	InputTokens int64 `json:"inputTokens,omitempty"`
	// outputTokens is the output tokens of the child's turns.
	// +optional
	OutputTokens int64 `json:"outputTokens,omitempty"`
	// sessionKey is the child session's key.
	// +optional
	SessionKey string `json:"sessionKey,omitempty"`
	// sessionId is the child session's transcript id.
	// +optional
	SessionID string `json:"sessionId,omitempty"`
	// transcriptPath is where the child's transcript is kept in the store.
	// +optional
	TranscriptPath string `json:"transcriptPath,omitempty"`
	// cost is the provider-reported cost, when known.
	// +optional
	Cost string `json:"cost,omitempty"`
}

// AttachmentReceipt proves what landed in the child's workspace.
type AttachmentReceipt struct {
	// name is the attachment's file name in the child's workspace.
	// +required
	Name string `json:"name"`
	// bytes is the attachment's size.
	// +required
	Bytes int64 `json:"bytes"`
	// sha256 is the hex SHA-256 of the attachment's content.
	// +required
	SHA256 string `json:"sha256"`
}

// SpawnStatus is the result status of sessions_spawn a run's status keeps. A spawn the
// caller may not make or the API server refuses never becomes a run, so accepted is the only
// value; the enum keeps any other word out of the API.
// +kubebuilder:validation:Enum=accepted
type SpawnStatus string

// SpawnAccepted: the run exists and its child session is being started.
const SpawnAccepted SpawnStatus = "accepted"

// SubagentRunStatus is the sessions_spawn result of the session-tools specification and
// the run's outcome. Atomic: its one writer is the run's controller (one field set for the
// whole status in managedFields).
// +structType=atomic
type SubagentRunStatus struct {
	// conditions are, when the run and its announce are done: Completed (the task succeeded),
	// Failed (it failed or timed out) or Cancelled. For GitOps tools (kstatus): Reconciling
	// while the run works, Stalled once it failed or timed out.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions  []metav1.Condition `json:"conditions,omitempty"`
	OwnerStatus `json:",inline"`
	// status is accepted once the spawn is taken.
	// +optional
	Status SpawnStatus `json:"status,omitempty"`
	// runId identifies the child's run.
	// +optional
	RunID string `json:"runId,omitempty"`
	// childSessionKey is agent:<agentId>:subagent:<uuid>.
	// +optional
	ChildSessionKey string `json:"childSessionKey,omitempty"`
	// phase is the step the run is in.
	// +optional
	Phase RunPhase `json:"phase,omitempty"`
	// result is the final reply, or the last tool result when the reply is empty: its first 8 KiB.
	// +optional
	Result string `json:"result,omitempty"`
	// resultSeq is set when result was cut to its first 8 KiB: the transcript record of the child session that holds the whole result, which the announce reports (up to 256 KiB).
	// +optional
	// +kubebuilder:validation:Minimum=1
	ResultSeq int64 `json:"resultSeq,omitempty"`
	// notes explain failures and timeouts.
	// +optional
	Notes string `json:"notes,omitempty"`
	// stats are the run's figures, as the announce reports them.
	// +optional
	Stats *RunStats `json:"stats,omitempty"`
	// announce is the outcome of the announce step in the requester.
	// +optional
	Announce *Announce `json:"announce,omitempty"`
	// attachments are the receipts of the materialized files.
	// +optional
	// +listType=atomic
	Attachments []AttachmentReceipt `json:"attachments,omitempty"`
	// attachmentsDir is the workspace directory holding the attachments.
	// +optional
	AttachmentsDir string `json:"attachmentsDir,omitempty"`
	// archiveAt is when the kept child session will be archived.
	// +optional
	ArchiveAt *metav1.Time `json:"archiveAt,omitempty"`
	// usage adds up the run's turns (the task and the announce) and, rolled up as it finishes, the usage of the runs its child spawned, so a run reports its whole tree.
	// +optional
	Usage *Usage `json:"usage,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sar,categories=agent-sessions
// +kubebuilder:selectablefield:JSONPath=`.spec.requesterSessionKey`
// +kubebuilder:printcolumn:name="Agent",type=string,JSONPath=`.spec.agentId`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Child",type=string,JSONPath=`.status.childSessionKey`
// +kubebuilder:printcolumn:name="Announce",type=string,JSONPath=`.status.announce.status`,priority=1
// +kubebuilder:printcolumn:name="Requester",type=string,JSONPath=`.spec.requesterSessionKey`,priority=1
// +kubebuilder:printcolumn:name="Error",type=string,JSONPath=`.status.notes`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// SubagentRun spawns a sub-agent run, as the sessions_spawn tool does.
type SubagentRun struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the run.
	// +required
	Spec SubagentRunSpec `json:"spec"`
	// status is written by the operator; its observedGeneration reads 0 until the operator has seen the object, so GitOps tools (kstatus, Argo CD) do not take a new object for reconciled.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status SubagentRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SubagentRunList is a list of SubagentRuns.
type SubagentRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SubagentRun `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SubagentRun{}, &SubagentRunList{})
}
