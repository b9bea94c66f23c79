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

// Condition types shared by the kinds of this API.
const (
	// ConditionReady says an Agent or SessionPolicy is usable.
	ConditionReady = "Ready"
	// ConditionReplied says a SessionSend's round 1 produced a reply (or failed for good).
	ConditionReplied = "Replied"
	// ConditionCompleted says a SessionSend or SubagentRun finished with success, as Job's
	// Complete does: `kubectl wait --for=condition=Completed` does not return on a failure.
	ConditionCompleted = "Completed"
	// ConditionFailed says a SessionSend or SubagentRun finished without success.
	ConditionFailed = "Failed"
	// ConditionCancelled says a SessionSend or SubagentRun was stopped by spec.cancel.
	ConditionCancelled = "Cancelled"
	// ConditionModelRetrying says a turn of an AgentSession is retrying its model call
	// (True, with the attempt and the error class) or was the last time it did (False).
	ConditionModelRetrying = "ModelRetrying"
	// ConditionReconciling is True while a SessionSend or SubagentRun works (kstatus reads
	// InProgress); absent otherwise.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True while an Agent, SessionPolicy or AgentSession is not Ready for
	// a reason only a change can mend, and on a SessionSend or SubagentRun that failed or
	// timed out (kstatus reads Failed); absent otherwise.
	ConditionStalled = "Stalled"
	// ConditionArchived says an AgentSession is archived: it runs no more turns and its
	// transcript is kept read-only. It replaces Ready, so kstatus reads the session Current.
	ConditionArchived = "Archived"
)

// Finished reports whether conditions mark a SessionSend or SubagentRun as finished:
// Completed, Failed or Cancelled.
func Finished(conditions []metav1.Condition) bool {
	for _, c := range conditions {
		switch c.Type {
		case ConditionCompleted, ConditionFailed, ConditionCancelled:
			if c.Status == metav1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// ArchiveAtAnnotation on an AgentSession asks its controller to archive it at that time
// (RFC 3339): a SubagentRun puts it on the child it keeps. Only the AgentSession controller
// writes a session's status.phase.
const ArchiveAtAnnotation = "sessions.agents.dev/archive-at"

// CompactRequestAnnotation on an AgentSession asks for a compaction of its history now
// (kubectl sessions compact KEY sets it to a request id); the session's controller runs
// the compaction step once per value and then removes the annotation.
const CompactRequestAnnotation = "sessions.agents.dev/compact-request"

// ResetAnnotation on an AgentSession asks its controller to reset it: when its value is the
// session's current status.sessionId, the controller archives that transcript and starts the
// session on a new one with a new sessionId. A value naming an older sessionId does nothing,
// so a reset asked twice, or after another reset, starts no third transcript.
const ResetAnnotation = "sessions.agents.dev/reset"

// RestoreAnnotation on an archived AgentSession asks its controller to restore it: when its
// value is the session's current status.sessionId and no archive-at annotation is due, the
// controller makes the archived transcript live again and the session Active. The sessions
// tool's restore sets it and removes the archive-at annotation in one guarded write; a
// later archive sets archive-at again, which outweighs a restore annotation left behind.
const RestoreAnnotation = "sessions.agents.dev/restore"

// RestoreFromAnnotation on a new AgentSession asks its controller to bring back a retired
// session (one whose object the SessionPolicy's retention deleted): its value is the retired
// sessionId. The controller adopts that transcript only when the store's record of it names
// the same object name, key and agent, and writes the record's spawnedBy and
// parentSessionKey; without such a record the session fails with the reason RestoreFailed.
// The sessions tool's restore creates the session with it; anyone else who sets it needs the
// verb patch on the session, as a restore does (the AgentSession webhook checks).
const RestoreFromAnnotation = "sessions.agents.dev/restore-from"

// Events of the SessionPolicy's retention (controllers/sessionpolicy/retention.go).
const (
	// EventSessionsRetired, on the SessionPolicy, counts the sessions one pass retired and
	// names the first few (a session's own Event would go with its object).
	EventSessionsRetired = "SessionsRetired"
	// EventRetireFailed, on an AgentSession, says its record could not be written, so its
	// object is kept and retried.
	EventRetireFailed = "RetireFailed"
)

// ReasonRestoreFailed is the reason of an archived AgentSession's Archived condition when a
// restore found no archived transcript to bring back (the store's retention removed it).
const ReasonRestoreFailed = "RestoreFailed"

// Tokens of the session-tools specification that a model replies with, exactly.
const (
	// ReplySkip stops the reply-back ping-pong.
	ReplySkip = "REPLY_SKIP"
	// AnnounceSkip keeps the announce step silent.
	AnnounceSkip = "ANNOUNCE_SKIP"
)

// AnnounceStatus is the outcome of an announce step.
// +kubebuilder:validation:Enum=delivered;skipped;noSink;failed;delivering
type AnnounceStatus string

const (
	AnnounceDelivered AnnounceStatus = "delivered"
	// AnnounceSkipped: the model said ANNOUNCE_SKIP (or, in a send's announce, nothing), or the send policy blocked it.
	AnnounceSkipped AnnounceStatus = "skipped"
	// AnnounceNoSink: there was something to say, but no SessionPolicy delivery sink for the channel.
	AnnounceNoSink AnnounceStatus = "noSink"
	AnnounceFailed AnnounceStatus = "failed"
	// AnnounceDelivering: a chat sink has taken some of the announce's parts (deliveredParts)
	// and the rest follow; a retry or a rate limit may be waiting.
	AnnounceDelivering AnnounceStatus = "delivering"
)

// MaxAnnounceParts bounds the messages one announce is split into.
const MaxAnnounceParts = 32

// Announce records the announce step of a send or a spawn.
type Announce struct {
	// status is delivered, skipped (ANNOUNCE_SKIP, nothing to say, or blocked by the send policy), noSink (something to say but no delivery sink for the channel in the SessionPolicy), failed, or delivering (a chat sink is posting its parts).
	// +optional
	Status AnnounceStatus `json:"status,omitempty"`
	// message is the announce text that was (or would have been) delivered, truncated.
	// +optional
	Message string `json:"message,omitempty"`
	// target is the channel (and recipient) the announce went to.
	// +optional
	Target string `json:"target,omitempty"`
	// reason explains a skip, a missing sink or a failure.
	// +optional
	Reason string `json:"reason,omitempty"`
	// error is the chat platform's own error text of a failed or retried delivery (never a token).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Error string `json:"error,omitempty"`
	// parts is how many messages a chat sink splits the announce into (the platform's length limit).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	Parts int32 `json:"parts,omitempty"`
	// deliveredParts are the parts the platform took, in order, each recorded before the next is sent: a manager restart goes on from the next one and posts none twice.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	DeliveredParts []DeliveredPart `json:"deliveredParts,omitempty"`
	// attempts is how many times the part being delivered was tried (at most the manager's --delivery-attempts).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Attempts int32 `json:"attempts,omitempty"`
	// nextAttemptAt is when the part being delivered is tried next: after a retryable failure (the platform's Retry-After, else a backoff) or the sink's rate limit.
	// +optional
	NextAttemptAt *metav1.MicroTime `json:"nextAttemptAt,omitempty"`
	// thread is the chat thread a thread-bound run's announces are bound to (SubagentRun spec.thread): the first message's thread, reused by every later part and by the announces of sends into the child session.
	// +optional
	Thread *AnnounceThread `json:"thread,omitempty"`
}

// DeliveredPart is one message a chat platform took.
type DeliveredPart struct {
	// messageId is the platform's id of the message (Slack ts, Discord and Telegram message id, WhatsApp wamid).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	MessageID string `json:"messageId,omitempty"`
	// at is when the platform took it.
	// +optional
	At *metav1.Time `json:"at,omitempty"`
}

// AnnounceThread is a chat thread an announce is bound to.
type AnnounceThread struct {
	// channel is the chat platform (telegram, discord, whatsapp, slack).
	// +required
	// +kubebuilder:validation:MaxLength=63
	Channel string `json:"channel"`
	// id is the platform's thread: Slack thread_ts, Discord thread channel id, Telegram message_thread_id or the message replies go to, WhatsApp the message replies quote.
	// +required
	// +kubebuilder:validation:MaxLength=256
	ID string `json:"id"`
}

// Action is what a send policy rule does.
// +kubebuilder:validation:Enum=allow;deny
type Action string

const (
	ActionAllow Action = "allow"
	ActionDeny  Action = "deny"
)

// ChatType is the shape of a conversation.
// +kubebuilder:validation:Enum=direct;group;room
type ChatType string

const (
	ChatTypeDirect ChatType = "direct"
	ChatTypeGroup  ChatType = "group"
	ChatTypeRoom   ChatType = "room"
)

// ThinkingLevel is how much a model reasons before it answers: off, minimal, low, medium,
// high or xhigh. Each provider maps it onto its own setting (OpenAI reasoning_effort,
// Anthropic's extended-thinking budget); unset leaves the provider's default.
// +kubebuilder:validation:Enum=off;minimal;low;medium;high;xhigh
type ThinkingLevel string

const (
	ThinkingOff     ThinkingLevel = "off"
	ThinkingMinimal ThinkingLevel = "minimal"
	ThinkingLow     ThinkingLevel = "low"
	ThinkingMedium  ThinkingLevel = "medium"
	ThinkingHigh    ThinkingLevel = "high"
	ThinkingXHigh   ThinkingLevel = "xhigh"
)

// DeliveryContext is where a session's replies go, normalized.
type DeliveryContext struct {
	// channel is the messaging surface, e.g. discord, telegram, webchat.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Channel string `json:"channel,omitempty"`
	// to is the recipient within the channel (chat, room or user id).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	To string `json:"to,omitempty"`
	// accountId selects the account that sends on the channel.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	AccountID string `json:"accountId,omitempty"`
	// threadId is the thread within the chat that announces go to: a thread-bound sub-agent session (SubagentRun spec.thread) gets its own, and sinks receive it.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	ThreadID string `json:"threadId,omitempty"`
}

// ChildSessionKeyAnnotation on a SubagentRun fixes its child's session key: the
// sessions_spawn tool sets it so it can return the key before the run is reconciled.
const ChildSessionKeyAnnotation = "sessions.agents.dev/child-session-key"

// HopsAnnotation on a SessionSend or SubagentRun counts the sends and spawns that led to it:
// the session tools set it to the hops of the object whose turn called them, plus one. The
// webhook accepts it only from the manager, and denies an object over the SessionPolicy's
// spec.limits.maxHops. Objects a person creates carry none (hop 0).
const HopsAnnotation = "sessions.agents.dev/hops"

// ChainLabel on a SessionSend or SubagentRun names the chain it belongs to: the UID of its
// root, the send or run (made by a person, or without a requester) that the chain of tool
// calls started from. The session tools set it on everything they create; the webhook
// accepts it only from the manager and counts a chain's members by it against the
// SessionPolicy's spec.limits.maxSendsPerChain and maxPairRepeats. A root carries none.
const ChainLabel = "sessions.agents.dev/chain"

// ChainRootAnnotation names a chain's root as <Kind>/<name> beside ChainLabel, so that the
// webhook can tell the root which chain limit its chain hit. Set by the manager only.
const ChainRootAnnotation = "sessions.agents.dev/chain-root"

// AgentUsableLabel, set to "true" on a Secret, lets any Agent or SessionPolicy sink of its
// namespace use the Secret, whoever created them. Without it, only a creator who may get the
// Secret can reference it.
const AgentUsableLabel = "sessions.agents.dev/agent-usable"

// VouchedSecretsAnnotation lists (comma-separated, sorted) the Secrets that the user who
// last created or updated an Agent or SessionPolicy may get. The mutating webhook writes it
// on every create and update, overwriting what the request carried, so nobody can vouch for
// a Secret they cannot read; the controllers read only Secrets it names or that carry
// AgentUsableLabel.
const VouchedSecretsAnnotation = "sessions.agents.dev/vouched-secrets"

// Verbs on agentsessions that RBAC grants per session (resourceNames = the object name).
const (
	// VerbActAs lets a user create SessionSends and SubagentRuns that speak for a session
	// (spec.fromSessionKey, spec.requesterSessionKey) or name a child session key.
	VerbActAs = "act-as"
	// VerbSetSendPolicy lets a user set or change a session's spec.sendPolicy and the fields
	// the send policy and delivery judge (channel, chatType, lastChannel, lastTo,
	// deliveryContext), whatever the write verb (create, update, patch, apply).
	VerbSetSendPolicy = "set-send-policy"
)

// VerbDeliver on sessionhooks (resourceNames = the hook's name) lets a user create the
// SessionSends of that hook's deliveries: those labelled HookLabel. Only the
// transcript-store's ServiceAccount holds it (config/rbac/hook_deliveries_role.yaml).
const VerbDeliver = "deliver"

// StartedByLabel on a SessionSend or SubagentRun that an agent's tool call created holds
// the UID of the send or run whose turn made it: cancelling that one cancels this one.
const StartedByLabel = "sessions.agents.dev/started-by"

// Pricing is what an Agent's model costs, per million tokens, as decimal strings (e.g. "3", "0.075").
// Every model call is priced with the Agent generation that ran it.
type Pricing struct {
	// inputPerMillion is the price of a million input tokens that were not cached.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,9}(\.[0-9]{1,9})?$`
	InputPerMillion string `json:"inputPerMillion,omitempty"`
	// outputPerMillion is the price of a million output tokens.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,9}(\.[0-9]{1,9})?$`
	OutputPerMillion string `json:"outputPerMillion,omitempty"`
	// cachedInputPerMillion is the price of a million input tokens read from the provider's prompt cache; unset prices them as input.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,9}(\.[0-9]{1,9})?$`
	CachedInputPerMillion string `json:"cachedInputPerMillion,omitempty"`
	// currency of the prices, an ISO 4217 code; default USD.
	// +optional
	// +kubebuilder:default=USD
	// +kubebuilder:validation:Pattern=`^[A-Z]{3}$`
	Currency string `json:"currency,omitempty"`
}

// Usage adds up the model usage of turns.
// A session's is cumulative and kept when it is archived; a send's holds all its turns; a run's holds its child's turns and, rolled up, the runs its child spawned.
type Usage struct {
	// inputTokens is the input tokens the model calls counted.
	// +optional
	InputTokens int64 `json:"inputTokens,omitempty"`
	// outputTokens is the output tokens the model calls counted.
	// +optional
	OutputTokens int64 `json:"outputTokens,omitempty"`
	// cachedInputTokens are the input tokens the provider read from its prompt cache (included in inputTokens).
	// +optional
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`
	// cost is the priced usage as a decimal string (9 decimals at most), in currency; empty when no turn was priced.
	// +optional
	Cost string `json:"cost,omitempty"`
	// currency is the currency of cost, from the Agents' pricing.
	// +optional
	Currency string `json:"currency,omitempty"`
	// turns is how many turns ran.
	// +optional
	Turns int64 `json:"turns,omitempty"`
}

// OwnerStatus is the status SessionSend and SubagentRun share, embedded inline in both (the
// CRD schemas are as if each declared the fields): the step runner reads and stamps it for
// either kind.
type OwnerStatus struct {
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// startedAt is when the operator began to work on the object.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// completedAt is when the object reached a terminal phase.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// GetOwnerStatus is the send's shared status.
func (s *SessionSend) GetOwnerStatus() *OwnerStatus { return &s.Status.OwnerStatus }

// GetOwnerStatus is the run's shared status.
func (r *SubagentRun) GetOwnerStatus() *OwnerStatus { return &r.Status.OwnerStatus }

// Finished says the owner reached its end: completedAt is set (the cache's trim keeps it).
func (s *OwnerStatus) Finished() bool { return s.CompletedAt != nil }

// CarriedChainAnnotation on a SessionSend or SubagentRun holds the chain and budget a caller
// carried across the wire (the A2A chain extension or MCP _meta; docs/reference/chain-extension.md),
// as compact JSON. Anyone may set it: the webhook and the budget ledger only ever narrow
// their limits by it, and what it names is keyed by the caller, so it stops nobody else.
const CarriedChainAnnotation = "sessions.agents.dev/carried-chain"

// DoorAnnotation on a SessionSend says which door made it for its caller ("a2a" or "mcp").
// The webhook counts such sends per target session and per caller against the
// SessionPolicy's spec.limits.doorSendsPerSession and doorSendsPerCaller: the backstop for
// a loop through a peer that drops the chain extension. Set by the doors; one a person sets
// only counts against their own sends.
const DoorAnnotation = "sessions.agents.dev/door"
