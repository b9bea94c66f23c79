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
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// SessionScheduleReconciler runs a SessionSchedule as batch/v1 CronJob runs Jobs: at each
// tick of spec.schedule (in spec.timeZone) it creates one SessionSend owned by the
// schedule, named <schedule>-<unix minutes of the tick>, so a tick is sent once however
// often it is reconciled or the manager restarts. Its steps: observe (the running sends,
// and the history of the ones that finished since), tick (what CronJob's rules say of now),
// then one status write, and a requeue at the next tick.
type SessionScheduleReconciler struct {
	client.Client
	// APIReader lists a schedule's finished sends: the manager's cache holds no finished
	// SessionSend (cacheindex.UnfinishedSends).
	APIReader client.Reader
	Clock     clock.Clock
	Recorder  recorder.EventRecorder
}

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionschedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionschedules/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=agentsessions,verbs=create
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=agents,verbs=get;list;watch

// scheduleFlow is one reconcile of a schedule: what it read, and the Events to record
// once its status write landed.
type scheduleFlow struct {
	sched *sessionsv1alpha1.SessionSchedule
	now   time.Time
	// active are the schedule's unfinished sends (from the cache).
	active []sessionsv1alpha1.SessionSend
	events []scheduleEvent
	// requeue is when to look again (the next tick); 0: at the next change.
	requeue time.Duration
}

type scheduleEvent struct{ kind, reason, msg string }

func (f *scheduleFlow) Event(kind, reason, msg string) {
	f.events = append(f.events, scheduleEvent{kind, reason, msg})
}

// Reconcile implements reconcile.Reconciler.
func (r *SessionScheduleReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := &sessionsv1alpha1.SessionSchedule{}
	if err := r.Get(ctx, req.NamespacedName, s); err != nil || !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := s.DeepCopy()
	f := &scheduleFlow{sched: s, now: r.Clock.Now()}
	for _, st := range []func(context.Context, *scheduleFlow) error{r.Observe, r.history, r.tick} {
		if err := st(ctx, f); err != nil {
			return ctrl.Result{}, err
		}
	}
	s.Status.ObservedGeneration = s.Generation
	if _, err := ownerflow.WriteStatus(ctx, r.Client, base, s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.Recorder != nil {
		for _, e := range f.events {
			r.Recorder.Eventf(s, nil, e.kind, e.reason, "Schedule", "%s", e.msg)
		}
	}
	return ctrl.Result{RequeueAfter: f.requeue}, nil
}

// Observe lists the schedule's running sends and records them in status.active.
func (r *SessionScheduleReconciler) Observe(ctx context.Context, f *scheduleFlow) error {
	var list sessionsv1alpha1.SessionSendList
	if err := r.List(ctx, &list, client.InNamespace(f.sched.Namespace), client.MatchingLabels{sessionsv1alpha1.ScheduleLabel: f.sched.Name}); err != nil {
		return err
	}
	f.active = f.active[:0]
	for _, s := range list.Items {
		if metav1.IsControlledBy(&s, f.sched) && !s.Status.Finished() {
			f.active = append(f.active, s)
		}
	}
	return nil
}

// setActive writes status.active from f.active.
func setActive(f *scheduleFlow) {
	refs := make([]sessionsv1alpha1.ActiveSend, 0, len(f.active))
	for _, s := range f.active {
		refs = append(refs, sessionsv1alpha1.ActiveSend{Name: s.Name, UID: s.UID})
	}
	if len(refs) == 0 {
		refs = nil
	}
	f.sched.Status.Active = refs
}

// setScheduleReady sets the Ready condition.
func setScheduleReady(s *sessionsv1alpha1.SessionSchedule, ok bool, reason, msg string) {
	status := metav1.ConditionTrue
	if !ok {
		status = metav1.ConditionFalse
	}
	ready := metav1.Condition{Type: sessionsv1alpha1.ConditionReady, Status: status, Reason: reason,
		Message: textutil.Truncate(msg, ownerflow.MaxConditionMessage), ObservedGeneration: s.Generation}
	meta.SetStatusCondition(&s.Status.Conditions, ready)
	ownerflow.SetStalled(&s.Status.Conditions, ready)
}

// schedulesOfAgent are the schedules of an Agent's namespace that name it: one waiting for
// the Agent ticks once it exists.
func (r *SessionScheduleReconciler) schedulesOfAgent(ctx context.Context, a client.Object) []reconcile.Request {
	var list sessionsv1alpha1.SessionScheduleList
	if err := r.List(ctx, &list, client.InNamespace(a.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, s := range list.Items {
		if s.Spec.AgentID == a.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
		}
	}
	return out
}

func (r *SessionScheduleReconciler) SetupWith(b *builder.Builder) error {
	return b.For(&sessionsv1alpha1.SessionSchedule{}).
		Owns(&sessionsv1alpha1.SessionSend{}).
		Watches(&sessionsv1alpha1.Agent{}, handler.EnqueueRequestsFromMapFunc(r.schedulesOfAgent)).
		Named("sessionschedule").Complete(ownerflow.RequeueConflicts(r))
}
