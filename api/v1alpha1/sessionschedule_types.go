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
	"k8s.io/apimachinery/pkg/types"
)

// ConcurrencyPolicy says what a SessionSchedule does when a tick comes while an earlier
// tick's send still runs, as batch/v1 CronJob's does.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// AllowConcurrent sends on every tick, whatever still runs.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips a tick while an earlier tick's send runs.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent cancels the running sends (spec.cancel) and sends the new tick.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// Labels and annotations of the sends that schedules and hooks create. Only the operator
// sets or changes the two labels (the SessionSend webhook refuses anyone else), and a send
// counts as a schedule's or a hook's only when what the label names is also its controller
// owner: the transcript's provenance and the schedule's concurrency policy trust nothing less.
const (
	// ScheduleLabel on a SessionSend names the SessionSchedule whose tick created it.
	ScheduleLabel = "sessions.agents.dev/schedule"
	// ScheduledTimeAnnotation on a schedule's SessionSend is the tick it sends (RFC 3339), as
	// CronJob's batch.kubernetes.io/cronjob-scheduled-timestamp.
	ScheduledTimeAnnotation = "sessions.agents.dev/scheduled-time"
	// HookLabel on a SessionSend names the SessionHook whose delivery created it.
	HookLabel = "sessions.agents.dev/hook"
	// DeliveryIDAnnotation on a hook's SessionSend is the delivery's id (Standard Webhooks'
	// webhook-id, or GitHub's X-GitHub-Delivery).
	DeliveryIDAnnotation = "sessions.agents.dev/delivery-id"
)

// Defaults of a SessionSchedule (the CRD defaults say the same).
const (
	DefaultSuccessfulSendsHistoryLimit = 3
	DefaultFailedSendsHistoryLimit     = 1
)

// SessionScheduleSpec is a cron schedule of sends into one session, with batch/v1 CronJob's field names and meanings where they apply.
type SessionScheduleSpec struct {
	// schedule is a standard five-field cron expression or a macro (@hourly, @daily, @weekly, @monthly, @yearly), as a CronJob's.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Schedule string `json:"schedule"`

	// timeZone is the IANA time zone the schedule is read in (e.g. Europe/Berlin); unset is UTC.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TimeZone *string `json:"timeZone,omitempty"`

	// suspend stops new ticks; the sends already made run on.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// startingDeadlineSeconds is how late a missed tick may still be sent; unset sends the most recent missed tick however late, as a CronJob does.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// concurrencyPolicy is what a tick does while an earlier tick's send runs: Allow sends anyway, Forbid skips the tick, Replace cancels the running send and sends; default Allow.
	// +optional
	// +kubebuilder:default=Allow
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// successfulSendsHistoryLimit is how many finished successful sends are kept; default 3.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	SuccessfulSendsHistoryLimit *int32 `json:"successfulSendsHistoryLimit,omitempty"`

	// failedSendsHistoryLimit is how many finished failed or cancelled sends are kept; default 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	FailedSendsHistoryLimit *int32 `json:"failedSendsHistoryLimit,omitempty"`

	// agentId is the Agent whose session the ticks go to; the session is created on first use.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	AgentID string `json:"agentId"`

	// message is the text each tick sends.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	Message string `json:"message"`

	// sessionKey is the session the ticks go to; default cron:<schedule name>.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	SessionKey string `json:"sessionKey,omitempty"`

	// timeoutSeconds is each send's spec.timeoutSeconds: 0 to 600 seconds, as a send's.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=600
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// budget is each send's spec.budget: one chain per tick.
	// +optional
	Budget *Budget `json:"budget,omitempty"`

	// ttlSecondsAfterFinished is each send's spec.ttlSecondsAfterFinished; the history limits delete sends too.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ActiveSend names a running send of a schedule.
type ActiveSend struct {
	// name of the SessionSend.
	// +required
	Name string `json:"name"`
	// uid of the SessionSend.
	// +required
	UID types.UID `json:"uid"`
}

// SessionScheduleStatus is what the schedule's controller last saw.
type SessionScheduleStatus struct {
	// conditions are Ready (the schedule parses and ticks), MissedStartTimes (True while too many start times were missed to catch up, as CronJob's TooManyMissedTimes).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// active are the sends of this schedule that have not finished.
	// +optional
	// +listType=atomic
	Active []ActiveSend `json:"active,omitempty"`
	// lastScheduleTime is the last tick a send was made for.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// lastSuccessfulTime is when the last send that completed well finished.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
	// nextScheduleTime is the next tick, unless suspended.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`
}

// ConditionMissedStartTimes is True on a SessionSchedule that missed more start times than
// it can count (CronJob's "too many missed start times"): set startingDeadlineSeconds.
const ConditionMissedStartTimes = "MissedStartTimes"

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ssched,categories=agent-sessions
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Timezone",type=string,JSONPath=`.spec.timeZone`,priority=1
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.active[*].name`
// +kubebuilder:printcolumn:name="Last",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextScheduleTime`,priority=1
// +kubebuilder:printcolumn:name="Session",type=string,JSONPath=`.spec.sessionKey`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// SessionSchedule sends a message into a session on a cron schedule, as a CronJob runs Jobs: each tick creates one SessionSend, named from the tick, owned by the schedule.
type SessionSchedule struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the schedule.
	// +required
	Spec SessionScheduleSpec `json:"spec"`
	// status is written by the operator; its observedGeneration reads 0 until the operator has seen the object, so GitOps tools (kstatus, Argo CD) do not take a new object for reconciled.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status SessionScheduleStatus `json:"status,omitempty"`
}

// TargetKey is the session the ticks go to: spec.sessionKey, or cron:<name>.
func (s *SessionSchedule) TargetKey() string {
	if s.Spec.SessionKey != "" {
		return s.Spec.SessionKey
	}
	return "cron:" + s.Name
}

// +kubebuilder:object:root=true

// SessionScheduleList is a list of SessionSchedules.
type SessionScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SessionSchedule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SessionSchedule{}, &SessionScheduleList{})
}
