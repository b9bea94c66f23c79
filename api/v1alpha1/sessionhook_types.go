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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HookSignature is the signature scheme a SessionHook verifies.
// +kubebuilder:validation:Enum=standard;github
type HookSignature string

const (
	// HookSignatureStandard is Standard Webhooks: webhook-id, webhook-timestamp and
	// webhook-signature (v1, HMAC-SHA256) with a whsec_ secret.
	HookSignatureStandard HookSignature = "standard"
	// HookSignatureGitHub is GitHub's X-Hub-Signature-256 (HMAC-SHA256 of the body), with
	// X-GitHub-Delivery as the delivery id.
	HookSignatureGitHub HookSignature = "github"
)

// Defaults and bounds of a SessionHook (the CRD says the same).
const (
	DefaultHookMaxBodyBytes  = 64 << 10
	MaxHookMaxBodyBytes      = 192 << 10
	DefaultHookRatePerMinute = 60
)

// SessionHookSpec is an HTTP endpoint that turns a signed POST into a send.
type SessionHookSpec struct {
	// agentId is the Agent whose session each delivery goes to; the session is created on first use.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	AgentID string `json:"agentId"`

	// message comes before the request body (as text; JSON pretty-printed) in each send.
	// +optional
	// +kubebuilder:validation:MaxLength=65534
	Message string `json:"message,omitempty"`

	// sessionKey is the session every delivery goes to; unset gives each delivery a new session hook:<uuid>.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	SessionKey string `json:"sessionKey,omitempty"`

	// signingSecretRef names the Secret key holding the signing secret (whsec_ and base64 for standard; any text for github), in the hook's namespace.
	// +required
	SigningSecretRef corev1.SecretKeySelector `json:"signingSecretRef"`

	// signature is the scheme deliveries are signed with: standard (Standard Webhooks) or github (X-Hub-Signature-256); default standard.
	// +optional
	// +kubebuilder:default=standard
	Signature HookSignature `json:"signature,omitempty"`

	// maxBodyBytes bounds a delivery's body; a larger one is answered 413. default 65536 (64 KiB), at most 196608 (192 KiB): the message and body must fit a send's message.
	// +optional
	// +kubebuilder:default=65536
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=196608
	MaxBodyBytes int32 `json:"maxBodyBytes,omitempty"`

	// ratePerMinute bounds the deliveries accepted per minute (per transcript-store replica); more are answered 429; default 60.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=6000
	RatePerMinute int32 `json:"ratePerMinute,omitempty"`

	// timeoutSeconds is each send's spec.timeoutSeconds: 0 to 600 seconds, as a send's.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=600
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// budget is each send's spec.budget.
	// +optional
	Budget *Budget `json:"budget,omitempty"`
}

// SessionHookStatus is what the hook's controller and its door last saw.
type SessionHookStatus struct {
	// conditions are Ready (the signing Secret is there and usable).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// url is the hook's full URL on the transcript-store's listener, to paste into the sender.
	// +optional
	URL string `json:"url,omitempty"`
	// lastDeliveryTime is when the last delivery was accepted.
	// +optional
	LastDeliveryTime *metav1.Time `json:"lastDeliveryTime,omitempty"`
	// deliveries counts the accepted deliveries.
	// +optional
	Deliveries int64 `json:"deliveries,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=shook,categories=agent-sessions
// +kubebuilder:printcolumn:name="Agent",type=string,JSONPath=`.spec.agentId`
// +kubebuilder:printcolumn:name="Signature",type=string,JSONPath=`.spec.signature`
// +kubebuilder:printcolumn:name="Deliveries",type=integer,JSONPath=`.status.deliveries`
// +kubebuilder:printcolumn:name="Last",type=date,JSONPath=`.status.lastDeliveryTime`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// SessionHook turns a signed HTTP POST to /hooks/<namespace>/<name> on the transcript-store's listener into a SessionSend.
type SessionHook struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the hook.
	// +required
	Spec SessionHookSpec `json:"spec"`
	// status is written by the operator; its observedGeneration reads 0 until the operator has seen the object, so GitOps tools (kstatus, Argo CD) do not take a new object for reconciled.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status SessionHookStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SessionHookList is a list of SessionHooks.
type SessionHookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SessionHook `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SessionHook{}, &SessionHookList{})
}
