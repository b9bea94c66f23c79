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

package ownerflow

import (
	"context"
	"errors"
	"fmt"
	"k8s.io/klog/v2"
	"reflect"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/tracing"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// NotReadyRequeue is how soon a step waiting for a session's transcript looks again.
const NotReadyRequeue = 250 * time.Millisecond

// TurnOwner is an object that owns turns (SessionSend, SubagentRun). The status the kinds
// share (sessionsv1alpha1.OwnerStatus: observedGeneration, startedAt, completedAt) is read and stamped here.
type TurnOwner interface {
	client.Object
	GetOwnerStatus() *sessionsv1alpha1.OwnerStatus
}

// OwnerKind is what differs between the kinds that own turns.
type OwnerKind[T TurnOwner] interface {
	// steps are the kind's named steps in order; the first applies a requested cancel
	// (abortForCancel), so the steps that still apply to a cancelled object run after it.
	Steps() []Step[T]
	// observe sets the kind's progress condition before a status write.
	Observe(obj T)
	// phase is the object's phase, for the finished-objects metric and its trace.
	Phase(obj T) string
	// afterFinish handles a finished object as the cache shows it: its TTL, a kept child's
	// archive.
	AfterFinish(ctx context.Context, obj T) (ctrl.Result, error)
}

// Step is one named step of an owner's reconcile. It returns done=false when the object
// must wait (a turn is running, a requeue is set) or the step ended it, which ends this
// reconcile.
type Step[T client.Object] struct {
	Name string
	Run  func(ctx context.Context, f *Flow[T]) (done bool, err error)
}

// Flow is one reconcile of one owner: the object the steps change, the Events they queue
// (emitted only once the status write landed, so a refused write does not repeat them),
// and the soonest requeue any of them asked for.
type Flow[T client.Object] struct {
	Obj     T
	Owner   turns.Owner
	Log     logr.Logger
	events  []queuedEvent
	requeue time.Duration

	// What the steps resolved for the steps after them: the session the turns run in (a
	// send's target, a run's child), the requesting session, and the agent.
	Session, Requester *sessionsv1alpha1.AgentSession
	Agent              *sessionsv1alpha1.Agent
	// awaiting is the pending ToolApproval a turn of this owner waits on.
	awaiting *sessionsv1alpha1.ToolApproval
}

type queuedEvent struct{ typ, reason, msg string }

// Event queues an Event on the object.
func (f *Flow[T]) Event(typ, reason, format string, args ...any) {
	f.events = append(f.events, queuedEvent{typ, reason, fmt.Sprintf(format, args...)})
}

// RequeueAfter asks to be reconciled again after d (the soonest request wins).
func (f *Flow[T]) RequeueAfter(d time.Duration) {
	if d > 0 && (f.requeue == 0 || d < f.requeue) {
		f.requeue = d
	}
}

// OwnerDeps are the fields the reconcilers of turn owners (SessionSend, SubagentRun) are
// built with, as every reconciler here is: an embedded client and exported fields.
type OwnerDeps struct {
	client.Client
	// Lookup finds sessions, Agents and policies: the cache first, a miss confirmed uncached.
	Lookup lookup.Lookup
	// Runner is the turn engine.
	Runner turns.Runner
	// Clock times timeouts, archive-at and TTLs.
	Clock    clock.Clock
	Recorder recorder.EventRecorder
	// Transcripts reads back the whole texts status keeps a preview of (WholeText).
	Transcripts transcript.Reader
}

// StepRunner reconciles an owner of turns through its kind's steps. It is the one place
// that owns the protocol with the turn engine: the stale-read guard, the deferred status
// write (once at the end, if anything changed), the Events after it, the release of the
// owner's turns when it finishes, is cancelled or is gone, and runTurn.
type StepRunner[T TurnOwner] struct {
	client   client.Client
	runner   turns.Runner
	clock    clock.Clock
	recorder recorder.EventRecorder
	// ownerKind is turns.OwnerSessionSend or turns.OwnerSubagentRun.
	ownerKind string
	of        OwnerKind[T]
	// finishedNow, when set, is told the status write that finished an object landed: what
	// cannot wait for the cache to show it finished (a finished send never shows there).
	finishedNow func(T)
	// awaiting shows whether a turn's tool call waits for approval (flow.awaiting): the
	// kind's phase AwaitingApproval and the condition of that name (approval_wait.go).
	awaiting func(f *Flow[T])
	stale    staleReads
	// lookup finds a turn's session and its Agent, which the turn request carries.
	lookup lookup.Lookup
}

// NewStepRunner builds the runner of a turn owner kind from its reconciler's deps: kind is
// turns.OwnerSessionSend or turns.OwnerSubagentRun, of the kind's steps; finishedNow and
// awaiting may be nil.
func NewStepRunner[T TurnOwner](d OwnerDeps, kind string, of OwnerKind[T], finishedNow func(T), awaiting func(f *Flow[T])) StepRunner[T] {
	return StepRunner[T]{client: d.Client, runner: d.Runner, clock: d.Clock, recorder: d.Recorder,
		ownerKind: kind, of: of, lookup: d.Lookup, finishedNow: finishedNow, awaiting: awaiting}
}

// Reconcile implements reconcile.Reconciler.
func (r *StepRunner[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	owner := turns.Owner{Kind: r.ownerKind, NamespacedName: req.NamespacedName}
	log := ctrl.LoggerFrom(ctx)
	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.release(owner, log, "gone")
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// WithValues copies the logger and encodes its values even when nothing is logged; this
	// runs on every reconcile, so only pay for it when the flow logs are on.
	if log.V(2).Enabled() {
		log = log.WithValues(r.ownerKind, klog.KObj(obj))
	}
	switch {
	case !obj.GetDeletionTimestamp().IsZero():
		r.release(owner, log, "deleting")
		return ctrl.Result{}, nil
	case obj.GetOwnerStatus().Finished():
		// Released when the cache shows it finished: until then the stale mark keeps a
		// reconcile queued meanwhile from redoing a step from the old read.
		r.release(owner, log, "finished")
		return r.of.AfterFinish(ctx, obj)
	case r.stale.stale(obj):
		log.V(3).Info("waiting for the cache to show our status write")
		return ctrl.Result{}, nil
	}
	if err := r.ensureTrace(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	f := &Flow[T]{Obj: obj, Owner: owner, Log: log}
	before := obj.DeepCopyObject().(T)
	stepErr := r.runSteps(ctx, f)
	if r.awaiting != nil && !obj.GetOwnerStatus().Finished() {
		r.awaiting(f)
	}
	// The steps change only status, so a changed object is a changed status.
	if !equality.Semantic.DeepEqual(before, obj) {
		obj.GetOwnerStatus().ObservedGeneration = obj.GetGeneration()
		r.of.Observe(obj)
		replaced := obj.GetResourceVersion()
		// A conflict (a stale cache read) is returned: requeueConflicts requeues it quietly,
		// and the next reconcile sees the newer object and queues its Events again.
		written, err := WriteStatus(ctx, r.client, before, obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		if written {
			r.wrote(before, obj, replaced)
		}
	}
	for _, ev := range f.events {
		if r.recorder != nil {
			r.recorder.Eventf(obj, nil, ev.typ, ev.reason, ev.reason, "%s", ev.msg)
		}
	}
	if stepErr != nil {
		return ctrl.Result{}, stepErr
	}
	return ctrl.Result{RequeueAfter: f.requeue}, nil
}

// wrote notes a status write that landed (replacing resourceVersion replaced): the stale
// guard waits for the cache to show it, and an object it finished is counted, its trace
// ended and finishedNow told.
func (r *StepRunner[T]) wrote(before, obj T, replaced string) {
	r.stale.wrote(obj, replaced)
	if !before.GetOwnerStatus().Finished() && obj.GetOwnerStatus().Finished() {
		finishedTotal.WithLabelValues(r.ownerKind, r.of.Phase(obj)).Inc()
		r.endTrace(obj)
		if r.finishedNow != nil {
			r.finishedNow(obj)
		}
	}
}

// runSteps runs the steps until one waits or fails.
func (r *StepRunner[T]) runSteps(ctx context.Context, f *Flow[T]) error {
	for _, s := range r.of.Steps() {
		done, err := s.Run(ctx, f)
		if err != nil {
			return fmt.Errorf("step %s: %w", s.Name, err)
		}
		if !done {
			f.Log.V(2).Info("waiting", "step", s.Name)
			return nil
		}
	}
	return nil
}

// AbortForCancel aborts the owner's turns when spec.cancel asks (requested) and the object
// is not cancelled yet; the kind's cancel step then ends it Cancelled.
func (r *StepRunner[T]) AbortForCancel(f *Flow[T], requested bool) bool {
	if requested {
		n := r.runner.Abort(f.Owner)
		f.Log.V(2).Info("cancel requested", "abortedTurns", n)
	}
	return requested
}

// release drops everything the engine and the stale guard hold for the owner; running
// turns are aborted, so a deleted object stops its model calls.
func (r *StepRunner[T]) release(owner turns.Owner, log logr.Logger, why string) {
	if n := r.runner.Abort(owner); n > 0 {
		log.V(2).Info("aborted turns", "reason", why, "turns", n)
	}
	r.stale.forget(owner.NamespacedName)
}

// RunTurn returns the outcome of the owner's turn at step, submitting the request made
// by build when the engine has none (the engine wakes the owner when the turn ends, and
// dedupes a turn already queued or running). It is the one place turns are submitted.
func (r *StepRunner[T]) RunTurn(ctx context.Context, f *Flow[T], step string, build func() turns.TurnRequest) (turns.TurnResult, bool, error) {
	id := turns.TurnID(f.Obj.GetUID(), step)
	if res, ok := r.runner.Result(f.Owner, id); ok {
		if res.AwaitingApproval == "" {
			return res, true, nil
		}
		if waiting, err := r.awaitApproval(ctx, f, res.AwaitingApproval); waiting || err != nil {
			return turns.TurnResult{}, false, err
		}
		// Decided: forget the waiting outcome; the same turn resumes from its transcript.
		r.runner.Abort(f.Owner)
	}
	req := build()
	req.ID, req.Owner, req.Namespace = id, f.Owner, f.Obj.GetNamespace()
	req.TraceParent = f.Obj.GetAnnotations()[tracing.Annotation]
	why, err := r.resolveTurn(ctx, &req)
	if err != nil || why != "" {
		return turns.TurnResult{Err: errors.New(why)}, why != "", err
	}
	if err := r.runner.Submit(ctx, req); err != nil {
		return turns.TurnResult{}, false, err
	}
	f.Log.V(2).Info("turn submitted", "step", step, "session", req.SessionKey)
	return turns.TurnResult{}, false, nil
}

// resolveTurn hands the turn its session and Agent, so the engine looks neither up again;
// it says why the turn cannot run ("" when it can): the session or Agent is missing, or the
// Agent is not Ready (the turn fails at once instead of calling a provider that cannot
// answer).
func (r *StepRunner[T]) resolveTurn(ctx context.Context, req *turns.TurnRequest) (string, error) {
	s, err := r.lookup.SessionByKey(ctx, req.Namespace, req.SessionKey)
	if err != nil {
		return "", err
	}
	if s == nil {
		return fmt.Sprintf("session %q not found", req.SessionKey), nil
	}
	agent, err := r.lookup.Agent(ctx, req.Namespace, s.Spec.AgentID)
	if err != nil {
		return "", err
	}
	if agent == nil {
		return fmt.Sprintf("agent %q not found", s.Spec.AgentID), nil
	}
	req.Session, req.Agent = s, agent
	if req.RecordOnly {
		return "", nil // no model is called: the Agent need not be Ready
	}
	return policy.AgentUnready(agent), nil
}

// TextMessage is a turn's input: text from prov (a send's message, a run's task or announce).
func TextMessage(text string, prov *transcript.Provenance) transcript.Message {
	return transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}, Provenance: prov}
}
