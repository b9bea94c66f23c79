package v1alpha1

// Condition types shared by the kinds of this API.
const (
	// ConditionReady says an Agent or SessionPolicy is usable.
	ConditionReady = "Ready"
	// ConditionReplied says a SessionSend's round 1 produced a reply (or failed for good).
	ConditionReplied = "Replied"
	// ConditionCompleted says a SessionSend or SubagentRun reached a terminal phase.
	ConditionCompleted = "Completed"
	// ConditionModelRetrying says a turn of an AgentSession is retrying its model call
	// (True, with the attempt and the error class) or was the last time it did (False).
	ConditionModelRetrying = "ModelRetrying"
)

// Tokens of the seeds that a model replies with, exactly.
const (
	// ReplySkip stops the reply-back ping-pong.
	ReplySkip = "REPLY_SKIP"
	// AnnounceSkip keeps the announce step silent.
	AnnounceSkip = "ANNOUNCE_SKIP"
)

// AnnounceStatus is the outcome of an announce step.
// +kubebuilder:validation:Enum=delivered;skipped;failed
type AnnounceStatus string

const (
	AnnounceDelivered AnnounceStatus = "delivered"
	AnnounceSkipped   AnnounceStatus = "skipped"
	AnnounceFailed    AnnounceStatus = "failed"
)

// Announce records the announce step of a send or a spawn.
type Announce struct {
	// status is delivered, skipped (ANNOUNCE_SKIP, no sink, or nothing to say) or failed.
	// +optional
	Status AnnounceStatus `json:"status,omitempty"`
	// message is the announce text that was (or would have been) delivered, truncated.
	// +optional
	Message string `json:"message,omitempty"`
	// target is the channel (and recipient) the announce went to.
	// +optional
	Target string `json:"target,omitempty"`
	// reason explains a skip or a failure.
	// +optional
	Reason string `json:"reason,omitempty"`
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
}

// ChildSessionKeyAnnotation on a SubagentRun fixes its child's session key: the
// sessions_spawn tool sets it so it can return the key before the run is reconciled.
const ChildSessionKeyAnnotation = "sessions.agents.dev/child-session-key"
