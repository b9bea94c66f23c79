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

package sessionschedule

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// tick applies CronJob's rules to now: the most recent unsent tick is sent (at most one
// catch-up after a downtime) unless it is past startingDeadlineSeconds, the
// concurrencyPolicy allows it and the schedule is not suspended; then it asks to be
// woken at the next tick.
func (r *SessionScheduleReconciler) tick(ctx context.Context, f *scheduleFlow) error {
	s := f.sched
	defer setActive(f)
	sched, err := policy.ParseSchedule(s.Spec.Schedule, ptrString(s.Spec.TimeZone))
	if err != nil {
		// The webhook refuses these; a schedule stored before it was installed waits for a fix.
		setScheduleReady(s, false, "InvalidSchedule", err.Error())
		s.Status.NextScheduleTime = nil
		return nil
	}
	if s.Spec.Suspend != nil && *s.Spec.Suspend {
		setScheduleReady(s, true, "Suspended", "suspended: no new ticks until spec.suspend is false")
		s.Status.NextScheduleTime = nil
		return nil
	}
	// A tick into agent:<missing>:main would only fail: the schedule waits for its Agent
	// (the Agent's creation wakes it).
	if agent, err := lookup.New(r.Client, r.APIReader).Agent(ctx, s.Namespace, s.Spec.AgentID); err != nil || agent == nil {
		if err == nil {
			setScheduleReady(s, false, "AgentNotFound", policy.ScheduleAgentMissing(s.Spec.AgentID, s.Namespace))
			s.Status.NextScheduleTime = nil
		}
		return err
	}
	in := policy.ScheduleInput{Schedule: sched, Created: s.CreationTimestamp.Time, Now: f.now}
	if t := s.Status.LastScheduleTime; t != nil {
		in.LastSchedule = &t.Time
	}
	if d := s.Spec.StartingDeadlineSeconds; d != nil {
		dl := time.Duration(*d) * time.Second
		in.StartingDeadline = &dl
	}
	d := policy.DecideTick(in)
	s.Status.NextScheduleTime = &metav1.Time{Time: d.Next}
	f.requeue = d.Next.Sub(f.now)
	setScheduleReady(s, true, "Scheduled", "next tick at "+d.Next.UTC().Format(time.RFC3339))
	if d.TooMany {
		msg := fmt.Sprintf("too many missed start times (more than %d): set or decrease spec.startingDeadlineSeconds or check clock skew", policy.MaxMissedStartTimes)
		if !meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionMissedStartTimes) {
			f.Event(corev1.EventTypeWarning, "TooManyMissedTimes", msg)
		}
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: sessionsv1alpha1.ConditionMissedStartTimes, Status: metav1.ConditionTrue,
			Reason: "TooManyMissedTimes", Message: msg, ObservedGeneration: s.Generation})
	} else if d.Missed > 0 {
		meta.RemoveStatusCondition(&s.Status.Conditions, sessionsv1alpha1.ConditionMissedStartTimes)
	}
	switch {
	case d.Due.IsZero():
		return nil
	case d.TooLate:
		scheduleTicks.WithLabelValues("missed").Inc()
		f.Event(corev1.EventTypeWarning, "MissSchedule", "missed the tick at "+d.Due.UTC().Format(time.RFC3339)+": past spec.startingDeadlineSeconds")
		return nil
	}
	// A read of the schedule older than its last status write sees the tick due again: its
	// send, running, says it was sent (no Forbid skip, no Replace of itself).
	for _, a := range f.active {
		if a.Name == policy.ScheduledSendName(s.Name, d.Due) {
			s.Status.LastScheduleTime = &metav1.Time{Time: d.Due}
			return nil
		}
	}
	action := policy.DecideConcurrency(string(s.Spec.ConcurrencyPolicy), len(f.active))
	switch action {
	case policy.TickSkip:
		// As CronJob: the tick stays unsent, and is sent when the running send ends if it is
		// still within startingDeadlineSeconds.
		scheduleTicks.WithLabelValues("skipped").Inc()
		f.Event(corev1.EventTypeNormal, "Skipped", "tick at "+d.Due.UTC().Format(time.RFC3339)+" skipped: concurrencyPolicy Forbid and "+f.active[0].Name+" still runs")
		return nil
	case policy.TickReplace:
		if err := r.cancelActive(ctx, f); err != nil {
			scheduleTicks.WithLabelValues("error").Inc()
			return err
		}
	}
	created, err := r.send(ctx, f, d.Due)
	if err != nil {
		scheduleTicks.WithLabelValues("error").Inc()
		return err
	}
	s.Status.LastScheduleTime = &metav1.Time{Time: d.Due}
	if created {
		outcome := "sent"
		if action == policy.TickReplace {
			outcome = "replaced"
		}
		scheduleTicks.WithLabelValues(outcome).Inc()
	}
	return nil
}

// cancelActive asks every running send of the schedule to stop (spec.cancel, Replace).
func (r *SessionScheduleReconciler) cancelActive(ctx context.Context, f *scheduleFlow) error {
	for i := range f.active {
		send := &f.active[i]
		if send.Spec.Cancel {
			continue
		}
		patch := client.MergeFrom(send.DeepCopy())
		send.Spec.Cancel = true
		if err := r.Patch(ctx, send, patch); client.IgnoreNotFound(err) != nil {
			return err
		}
		f.Event(corev1.EventTypeNormal, "Replaced", "cancelled "+send.Name+" for the next tick (concurrencyPolicy Replace)")
	}
	f.active = f.active[:0]
	return nil
}

// send creates the tick's SessionSend (and its session, on first use); false when a
// restarted manager or an earlier reconcile made it already.
func (r *SessionScheduleReconciler) send(ctx context.Context, f *scheduleFlow, due time.Time) (bool, error) {
	s := f.sched
	key := s.TargetKey()
	if err := r.ensureSession(ctx, s.Namespace, key, s.Spec.AgentID); err != nil {
		return false, err
	}
	send := &sessionsv1alpha1.SessionSend{
		ObjectMeta: metav1.ObjectMeta{Name: policy.ScheduledSendName(s.Name, due), Namespace: s.Namespace,
			Labels:      map[string]string{sessionsv1alpha1.ScheduleLabel: s.Name},
			Annotations: map[string]string{sessionsv1alpha1.ScheduledTimeAnnotation: due.UTC().Format(time.RFC3339)}},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: s.Spec.Message, TimeoutSeconds: s.Spec.TimeoutSeconds,
			Budget: s.Spec.Budget.DeepCopy(), TTLSecondsAfterFinished: s.Spec.TTLSecondsAfterFinished},
	}
	if err := controllerutil.SetControllerReference(s, send, r.Scheme()); err != nil {
		return false, err
	}
	err := r.Create(ctx, send)
	if apierrors.IsAlreadyExists(err) {
		return false, nil
	}
	if err != nil {
		f.Event(corev1.EventTypeWarning, "SendFailed", "tick at "+due.UTC().Format(time.RFC3339)+": "+err.Error())
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			// The send policy, a budget or a chain limit refused the tick: it is judged as
			// any send, and is not tried again.
			scheduleTicks.WithLabelValues("refused").Inc()
			s.Status.LastScheduleTime = &metav1.Time{Time: due}
			return false, nil
		}
		return false, err
	}
	f.active = append(f.active, *send)
	f.Event(corev1.EventTypeNormal, "Sent", "tick at "+due.UTC().Format(time.RFC3339)+": created "+send.Name+" into "+key)
	return true, nil
}

// ensureSession creates the session key of agentID when it does not exist (first use).
func (r *SessionScheduleReconciler) ensureSession(ctx context.Context, ns, key, agentID string) error {
	existing, err := lookup.New(r.Client, r.APIReader).SessionByKey(ctx, ns, key)
	if err != nil || existing != nil {
		return err
	}
	sess := &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: ns},
		Spec:       sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agentID, ChatType: sessionsv1alpha1.ChatTypeDirect},
	}
	if err := r.Create(ctx, sess); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
