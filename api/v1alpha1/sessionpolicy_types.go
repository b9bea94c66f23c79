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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Visibility is which sessions the session tools of a session may see.
// +kubebuilder:validation:Enum=self;tree;agent;all
type Visibility string

const (
	VisibilitySelf  Visibility = "self"
	VisibilityTree  Visibility = "tree"
	VisibilityAgent Visibility = "agent"
	VisibilityAll   Visibility = "all"
)

// SendRuleMatch selects sessions by what they are; every field given must match.
// +kubebuilder:validation:XValidation:rule="has(self.channel) || has(self.chatType) || has(self.keyPrefix)",message="a match needs at least one of channel, chatType, keyPrefix"
type SendRuleMatch struct {
	// channel matches the target session's channel.
	// +optional
	Channel Channel `json:"channel,omitempty"`
	// chatType matches the target session's chat type.
	// +optional
	ChatType ChatType `json:"chatType,omitempty"`
	// keyPrefix matches the start of the target session's key.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	KeyPrefix string `json:"keyPrefix,omitempty"`
}

// SendRule allows or denies sends into the sessions it matches.
type SendRule struct {
	// match selects the sessions the rule applies to.
	// +required
	Match SendRuleMatch `json:"match"`
	// action allows or denies sends into the matched sessions.
	// +required
	Action Action `json:"action"`
}

// SendPolicySpec is session.sendPolicy of the session-tools specification: the first
// matching deny denies, a matching allow allows, else default. A session's own spec.sendPolicy wins over all.
type SendPolicySpec struct {
	// rules are tried in order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Rules []SendRule `json:"rules,omitempty"`
	// default applies when no rule matches; unset allows.
	// +optional
	Default Action `json:"default,omitempty"`
}

// AgentToAgentSpec governs sends and visibility across agents.
type AgentToAgentSpec struct {
	// enabled allows a session to see and send to other agents' sessions.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// allow are globs of agent ids reachable across agents ("*" for any).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	Allow []string `json:"allow,omitempty"`
	// maxPingPongTurns bounds the reply-back loop of a send, 0 to 5; default 5.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	MaxPingPongTurns *int32 `json:"maxPingPongTurns,omitempty"`
}

// AttachmentLimits lower the built-in attachment limits of spawns.
type AttachmentLimits struct {
	// maxCount is the number of attachments per spawn, at most 50.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=50
	MaxCount *int32 `json:"maxCount,omitempty"`
	// maxFileBytes is the decoded size of one attachment, at most 1 MiB.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1048576
	MaxFileBytes *int64 `json:"maxFileBytes,omitempty"`
	// maxTotalBytes is the decoded size of all attachments, at most 5 MiB.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5242880
	MaxTotalBytes *int64 `json:"maxTotalBytes,omitempty"`
}

// DeliveryKind is how a sink delivers an announce.
// +kubebuilder:validation:Enum=webhook;events;telegram;discord;whatsapp;slack
type DeliveryKind string

const (
	// DeliveryWebhook POSTs each announce to the sink's url, signed as Standard Webhooks says
	// when signingSecretRef is set.
	DeliveryWebhook DeliveryKind = "webhook"
	// DeliveryEvents records each announce as an AnnounceDelivered Event on its session:
	// nothing leaves the cluster, kubectl events shows it (local runs, demos).
	DeliveryEvents DeliveryKind = "events"
	// DeliveryTelegram sends with the Telegram Bot API's sendMessage.
	DeliveryTelegram DeliveryKind = "telegram"
	// DeliveryDiscord sends with Discord's REST API (v10) as a bot.
	DeliveryDiscord DeliveryKind = "discord"
	// DeliveryWhatsApp sends with the WhatsApp Business Cloud API.
	DeliveryWhatsApp DeliveryKind = "whatsapp"
	// DeliverySlack sends with the Slack Web API's chat.postMessage.
	DeliverySlack DeliveryKind = "slack"
)

// IsChat reports whether the kind posts to a chat platform's own API.
func (k DeliveryKind) IsChat() bool {
	switch k {
	case DeliveryTelegram, DeliveryDiscord, DeliveryWhatsApp, DeliverySlack:
		return true
	}
	return false
}

// DeliverySink is where announces for one channel go.
// +kubebuilder:validation:XValidation:rule="has(self.url) == (!has(self.kind) || self.kind == 'webhook')",message="a webhook sink needs url; an events sink takes none, and a chat sink takes apiURL instead"
// +kubebuilder:validation:XValidation:rule="!has(self.apiURL) || (has(self.kind) && self.kind in ['telegram', 'discord', 'whatsapp', 'slack'])",message="apiURL is for the chat kinds telegram, discord, whatsapp and slack"
// +kubebuilder:validation:XValidation:rule="!(has(self.kind) && self.kind in ['telegram', 'discord', 'whatsapp', 'slack']) || has(self.secretRef)",message="a chat sink needs secretRef: the bot token"
// +kubebuilder:validation:XValidation:rule="has(self.phoneNumberId) == (has(self.kind) && self.kind == 'whatsapp')",message="phoneNumberId is required for, and only for, a whatsapp sink"
// +kubebuilder:validation:XValidation:rule="!has(self.signingSecretRef) || !has(self.kind) || self.kind == 'webhook'",message="signingSecretRef is for webhook sinks"
type DeliverySink struct {
	// channel whose announces go to this sink.
	// +required
	Channel Channel `json:"channel"`
	// kind is webhook (the default: a JSON POST to url), events (an AnnounceDelivered Event on the session, no url), or a chat platform's own API: telegram, discord, whatsapp or slack.
	// +optional
	// +kubebuilder:default=webhook
	Kind DeliveryKind `json:"kind,omitempty"`
	// url receives a JSON POST per announce, with an Idempotency-Key header (kind webhook).
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	URL string `json:"url,omitempty"`
	// apiURL is the chat platform's API origin (chat kinds); unset, the platform's public API (https://api.telegram.org, https://discord.com, https://graph.facebook.com, https://slack.com).
	// Set it for a proxy or a test server; the operator's egress allow list applies to it, and the token is sent to this origin only.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^/?#]+/?$`
	APIURL string `json:"apiURL,omitempty"`
	// secretRef names a Secret key: the bot token of a chat sink, or the bearer token a webhook sink sends.
	// The policy's writer must be allowed to get the Secret, or the Secret must carry the label sessions.agents.dev/agent-usable=true.
	// +optional
	SecretRef *corev1.SecretKeySelector `json:"secretRef,omitempty"`
	// signingSecretRef names a Secret key holding a Standard Webhooks secret (whsec_ and base64): every POST of a webhook sink then carries webhook-id, webhook-timestamp and webhook-signature headers.
	// The same rule as secretRef decides who may name it.
	// +optional
	SigningSecretRef *corev1.SecretKeySelector `json:"signingSecretRef,omitempty"`
	// phoneNumberId is the WhatsApp Business phone number id that sends (kind whatsapp).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,32}$`
	PhoneNumberID string `json:"phoneNumberId,omitempty"`
	// apiVersion is the Graph API version of a whatsapp sink, e.g. v23.0; unset, v23.0.
	// +optional
	// +kubebuilder:validation:Pattern=`^v[0-9]{1,3}\.[0-9]{1,3}$`
	APIVersion string `json:"apiVersion,omitempty"`
	// ratePerMinute bounds the messages this sink posts per minute (a token bucket with this burst), so a storm of announces cannot get a bot banned; later parts wait their turn.
	// Unset: 20 for telegram, 60 for discord and slack, 600 for whatsapp, no bound for webhook and events.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=6000
	RatePerMinute *int32 `json:"ratePerMinute,omitempty"`
}

// SessionPolicySpec is the namespace's policy for sends, visibility and spawns.
type SessionPolicySpec struct {
	// sendPolicy decides which sessions may receive sends.
	// +optional
	SendPolicy SendPolicySpec `json:"sendPolicy,omitempty"`
	// agentToAgent governs cross-agent access and the ping-pong bound.
	// +optional
	// +kubebuilder:default={}
	AgentToAgent AgentToAgentSpec `json:"agentToAgent,omitempty"`
	// visibility is what session tools may see: self (the session alone), tree (the default: the session and the sessions it spawned), agent (the agent's sessions) or all.
	// +optional
	// +kubebuilder:default=tree
	Visibility Visibility `json:"visibility,omitempty"`
	// attachments lower the spawn attachment limits.
	// +optional
	Attachments *AttachmentLimits `json:"attachments,omitempty"`
	// archiveAfterMinutes overrides the Agents' sub-agent archive TTL in this namespace.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=525600
	ArchiveAfterMinutes *int32 `json:"archiveAfterMinutes,omitempty"`
	// delivery are the announce sinks, one per channel.
	// +optional
	// +listType=map
	// +listMapKey=channel
	// +kubebuilder:validation:MaxItems=16
	Delivery []DeliverySink `json:"delivery,omitempty"`
	// limits bound the chains and the rate of sends and spawns that agents' tools make.
	// +optional
	Limits *ChainLimits `json:"limits,omitempty"`
	// defaultAgentId is the agent a spawn without a requester and without spec.agentId runs under (a person's minimal spawn); unset, the namespace's only Agent when it has one.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9_-]{0,63}$`
	DefaultAgentID string `json:"defaultAgentId,omitempty"`
	// budgets bound what the namespace's turns spend: per window, per send and per run tree.
	// +optional
	Budgets *Budgets `json:"budgets,omitempty"`
	// toolApproval says which tool calls in this namespace wait for a person's decision; its require cannot be loosened by an Agent's allow.
	// +optional
	ToolApproval *ApprovalPolicy `json:"toolApproval,omitempty"`
	// retention says how long archived sessions keep their AgentSession object and how many the namespace keeps; unset, 168h and 1000.
	// Past either, the object is deleted and the transcript store keeps a compact record of it: sessions_list (archived), sessions_history and restore still find it until the store's archived-transcript retention.
	// +optional
	Retention *RetentionSpec `json:"retention,omitempty"`
}

// Default retention of archived sessions' objects (RetentionSpec).
const (
	DefaultArchivedSessionsRetention = 7 * 24 * time.Hour
	DefaultMaxArchivedSessions       = 1000
)

// RetentionSpec says when an archived session's AgentSession object is deleted, its compact record kept in the transcript store.
type RetentionSpec struct {
	// archivedSessions is how long a session stays archived with its object, counted from its Archived condition, e.g. 168h; default 168h (7 days); 0s deletes the object once archived.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(s|m|h))+$`
	ArchivedSessions *metav1.Duration `json:"archivedSessions,omitempty"`
	// maxArchivedSessions is how many archived sessions of the namespace keep their object at most, the longest archived retired first; default 1000.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	MaxArchivedSessions *int32 `json:"maxArchivedSessions,omitempty"`
}

// ChainLimits bound what agents start on their own: how long and how large a chain of tool-made sends and spawns may grow, how often it may repeat a pair, and how fast a namespace's tools may create them.
type ChainLimits struct {
	// maxHops is the longest chain of tool-made sends and spawns from one person's send or spawn (hop 1 is the first tool call); default 8.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	MaxHops *int32 `json:"maxHops,omitempty"`
	// toolCreatesPerMinute is how many SessionSends and SubagentRuns the namespace's agent tools may create per minute (a token bucket with this burst).
	// Unset uses the operator's --tool-creates-per-minute.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	ToolCreatesPerMinute *int32 `json:"toolCreatesPerMinute,omitempty"`
	// maxSendsPerChain is how many SessionSends and SubagentRuns one chain may hold: its root (a person's send or spawn) and every send and spawn agents' tools made from it, whatever their depth or fan-out; default 20.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MaxSendsPerChain *int32 `json:"maxSendsPerChain,omitempty"`
	// maxPairRepeats is how many tool-made sends of one chain may go from the same requester session to the same target session; default 2, which stops A to B to A loops and A to B to C to A cycles at their second lap.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxPairRepeats *int32 `json:"maxPairRepeats,omitempty"`
	// doorSendsPerSession is how many SessionSends the /a2a and /mcp doors may make into one session per doorSendWindow, whatever their callers carry: the backstop for a loop through a peer that drops the chain extension; default 10.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	DoorSendsPerSession *int32 `json:"doorSendsPerSession,omitempty"`
	// doorSendsPerCaller is how many SessionSends one caller (the user a door authenticated) may make through the /a2a and /mcp doors of the namespace per doorSendWindow; default 20.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	DoorSendsPerCaller *int32 `json:"doorSendsPerCaller,omitempty"`
	// doorSendWindow is the sliding window both door limits count in, e.g. 1m; default 1m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(s|m|h))+$`
	DoorSendWindow *metav1.Duration `json:"doorSendWindow,omitempty"`
}

// SessionPolicyStatus reports whether the policy is in force.
type SessionPolicyStatus struct {
	// conditions are Ready (the policy is in force), and Stalled with the same reason while it is not.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// spend is what the namespace's turns used in the current window of spec.budgets.namespace, written every few seconds while it changes.
	// +optional
	Spend *Spend `json:"spend,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=spol,categories=agent-sessions
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'default'",messageExpression="'metadata.name is \\'' + self.metadata.name + '\\': a namespace has one SessionPolicy and it is named default'",fieldPath=".metadata",reason=FieldValueInvalid
// +kubebuilder:printcolumn:name="Default",type=string,JSONPath=`.spec.sendPolicy.default`
// +kubebuilder:printcolumn:name="Visibility",type=string,JSONPath=`.spec.visibility`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// SessionPolicy is a namespace's send policy, visibility, ping-pong bound and delivery sinks.
type SessionPolicy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the policy.
	// +optional
	Spec SessionPolicySpec `json:"spec,omitempty"`
	// status is written by the operator; its observedGeneration reads 0 until the operator has seen the object, so GitOps tools (kstatus, Argo CD) do not take a new object for reconciled.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status SessionPolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SessionPolicyList is a list of SessionPolicies.
type SessionPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SessionPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SessionPolicy{}, &SessionPolicyList{})
}
