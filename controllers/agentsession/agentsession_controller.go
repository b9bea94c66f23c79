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

package agentsession

import (
	"context"
	"fmt"
	"k8s.io/klog/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// TranscriptFinalizer is legacy: managers before the cleanup of deletes (cleanup.go) put it
// on every session to archive its transcript before the object went. The reconciler takes
// it off a live session (one patch, once) and still honours it on a session deleted while
// it carried it, so an upgrade leaves no object stuck in deletion. New sessions never get it.
const TranscriptFinalizer = "sessions.agents.dev/transcript"

// AgentSessionReconciler gives each session its transcript (the sessionId is the object's
// UID), derives kind and channel from the key, archives the transcript when the session is
// archived (on delete, the Cleanup does: cleanup.go), and writes what the turn engine reports of the session's turns
// (counters, the ModelRetrying condition): the one writer of a session's status.
type AgentSessionReconciler struct {
	client.Client
	Store transcript.Store
	// Retired holds the records of sessions the SessionPolicy's retention retired: a new
	// session's restore-from annotation adopts one (adopt.go); nil adopts none.
	Retired transcript.Retirer
	// Runner holds the sessions' turn reports and wakes the reconciler when one changes; it
	// also runs the compaction steps sessions ask for (compact.go).
	Runner turns.Runner
	// StatusInterval is how long a report waits in the work queue before it is written, so a
	// busy session's turns cost one status write per interval (--session-status-interval);
	// <= 0 writes at once.
	StatusInterval time.Duration
	// Clock decides when an archive-at annotation is due; nil is the real clock.
	Clock    clock.Clock
	Recorder recorder.EventRecorder
	// WorkspaceRoot holds the sessions' workspaces (a sub-agent's attachments and files);
	// a session's is removed with its transcript's archive. Empty: no workspaces.
	WorkspaceRoot string
	// Sandboxes: sessions' SandboxClaims are reported, suspended and released
	// (session_sandbox.go).
	Sandboxes bool
}

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=agentsessions,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=agentsessions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create

func (r *AgentSessionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := &sessionsv1alpha1.AgentSession{}
	if err := r.Get(ctx, req.NamespacedName, s); err != nil {
		if apierrors.IsNotFound(err) {
			r.forgetReport(req.NamespacedName)
			return ctrl.Result{}, r.sweepSandboxClaim(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if !s.DeletionTimestamp.IsZero() {
		r.forgetReport(req.NamespacedName)
		return ctrl.Result{}, r.finalizeLegacy(ctx, s)
	}
	if err := r.dropLegacyFinalizer(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	base := s.DeepCopy()
	adopted, requeue, err := r.adoptWhenAsked(ctx, s)
	if err != nil || requeue {
		return ctrl.Result{}, err
	}
	if err := r.restoreWhenAsked(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	res := r.archiveWhenAsked(ctx, s)
	if err := r.resetWhenAsked(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileTranscript(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.compactWhenAsked(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	sbRes, err := r.reconcileSandbox(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	res = earlier(res, sbRes)
	if sb := s.Status.Sandbox; sb != nil && sb.Phase == sessionsv1alpha1.SandboxFailed {
		// Its tools cannot run until something changes (the Agent's image, its RuntimeClass):
		// Ready=False and Stalled, so kstatus and Argo CD say so.
		setSessionReady(s, metav1.ConditionFalse, "SandboxFailed", "the sandbox cannot start: "+sb.Message)
	}
	rep, reported := r.report(req.NamespacedName)
	if reported {
		if err := r.applyReport(ctx, s, rep); err != nil {
			return ctrl.Result{}, err
		}
	}
	// One write of the whole status (writeStatus: with the optimistic lock).
	if _, err := ownerflow.WriteStatus(ctx, r.Client, base, s); err != nil {
		return res, err
	}
	if reported {
		r.Runner.ReportWritten(req.NamespacedName, rep.Seq)
	}
	// The Event after the write lands (as steps.go): a refused write says nothing, and the
	// reconcile it is retried in creates (idempotently) and says it then.
	if base.Status.SessionID == "" && s.Status.SessionID != "" && !adopted {
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "TranscriptCreated", "Create", "transcript %s created", s.Status.TranscriptPath)
	}
	if base.Status.Phase == sessionsv1alpha1.SessionArchived && s.Status.Phase == sessionsv1alpha1.SessionActive {
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "Restored", "Restore", "restored: transcript %s is live again", s.Status.SessionID)
		r.unretire(ctx, s)
	}
	if adopted {
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "Restored", "Restore", "restored from its retention record: transcript %s is live again", s.Status.SessionID)
		r.unretire(ctx, s)
	}
	if archivedReason(s) == sessionsv1alpha1.ReasonRestoreFailed && archivedReason(base) != sessionsv1alpha1.ReasonRestoreFailed {
		r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, sessionsv1alpha1.ReasonRestoreFailed, "Restore", "%s",
			meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionArchived).Message)
	}
	r.sandboxEvents(base, s)
	if base.Status.SessionID != "" && s.Status.SessionID != base.Status.SessionID {
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "Reset", "Reset", "reset: transcript %s archived, new sessionId %s", base.Status.SessionID, s.Status.SessionID)
	}
	return res, nil
}

// report is the engine's unwritten report of the session, if any.
func (r *AgentSessionReconciler) report(key types.NamespacedName) (turns.SessionReport, bool) {
	if r.Runner == nil {
		return turns.SessionReport{}, false
	}
	return r.Runner.SessionReport(key)
}

// forgetReport drops the report of a session that is gone or going.
func (r *AgentSessionReconciler) forgetReport(key types.NamespacedName) {
	if rep, ok := r.report(key); ok {
		r.Runner.ReportWritten(key, rep.Seq)
	}
}

// archiveWhenAsked archives the session once its archive-at annotation (set by the run that
// keeps it) is due, and asks to be woken then otherwise.
func (r *AgentSessionReconciler) archiveWhenAsked(ctx context.Context, s *sessionsv1alpha1.AgentSession) ctrl.Result {
	if s.Status.Phase == sessionsv1alpha1.SessionArchived {
		return ctrl.Result{}
	}
	clk := r.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	due, left := archiveDue(s, clk.Now())
	if !due {
		return ctrl.Result{RequeueAfter: left}
	}
	s.Status.Phase = sessionsv1alpha1.SessionArchived
	ctrl.LoggerFrom(ctx).V(2).Info("archiving session as its archive-at annotation asks", "agentSession", klog.KObj(s))
	return ctrl.Result{}
}

// reconcileTranscript creates the transcript once and keeps the derived status fields.
func (r *AgentSessionReconciler) reconcileTranscript(ctx context.Context, s *sessionsv1alpha1.AgentSession) error {
	key, err := sessionkey.Parse(s.Spec.Key)
	if err != nil {
		setSessionReady(s, metav1.ConditionFalse, "InvalidKey", textutil.Truncate(err.Error(), ownerflow.MaxConditionMessage))
		s.Status.ObservedGeneration = s.Generation
		return nil
	}
	s.Status.Kind = sessionsv1alpha1.SessionKind(key.Kind)
	s.Status.Channel = sessionkey.ChannelOf(key, string(s.Spec.Channel), s.Spec.LastChannel)
	s.Status.ObservedGeneration = s.Generation
	if s.Status.Phase == "" {
		s.Status.Phase = sessionsv1alpha1.SessionActive
	}
	if s.Status.Phase == sessionsv1alpha1.SessionArchived {
		// Once the Archived condition is written the transcript was archived before it (or
		// never was live: RestoreFailed), as goneOf relies on. A later reconcile asks the
		// store nothing: an archive of an archived transcript lists its namespace's directory,
		// which holds every archived transcript until their retention.
		if !meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionArchived) {
			if err := r.archive(ctx, s); err != nil {
				return err
			}
		}
		// Archived, not un-Ready: the session is done, as a completed Job is, and GitOps
		// tools (kstatus reads Ready=False as InProgress) must not wait for it forever.
		meta.RemoveStatusCondition(&s.Status.Conditions, sessionsv1alpha1.ConditionReady)
		meta.RemoveStatusCondition(&s.Status.Conditions, sessionsv1alpha1.ConditionStalled)
		if !meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionArchived) { // a RestoreFailed stays
			// Its time is the injected clock's: the SessionPolicy's retention counts from it.
			meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: sessionsv1alpha1.ConditionArchived, Status: metav1.ConditionTrue,
				Reason: "Archived", Message: "the transcript is archived", LastTransitionTime: metav1.NewTime(r.now())})
		}
		return nil
	}
	if s.Status.SessionID == "" {
		stats, err := r.Store.CreateSession(ctx, transcript.SessionHeader{
			Namespace: s.Namespace, SessionID: string(s.UID), SessionKey: s.Spec.Key, Name: s.Name,
			ParentSessionKey: s.Spec.ParentSessionKey, CreatedAt: s.CreationTimestamp.Time,
		})
		if err != nil {
			return fmt.Errorf("create transcript: %w", err)
		}
		s.Status.SessionID = string(s.UID)
		s.Status.TranscriptPath = stats.Path
		if s.Status.UpdatedAt == nil { // the UPDATED column of a session with no message yet
			s.Status.UpdatedAt = &metav1.Time{Time: stats.UpdatedAt}
		}
	}
	setSessionReady(s, metav1.ConditionTrue, "TranscriptReady", "the transcript exists")
	return nil
}

// setSessionReady sets the session's Ready condition and the Stalled that mirrors it. A
// session's conditions carry no observedGeneration of their own: reconcileTranscript stamps
// status.observedGeneration in the same write, and kubectl wait and kstatus read it there.
func setSessionReady(s *sessionsv1alpha1.AgentSession, status metav1.ConditionStatus, reason, msg string) {
	ready := metav1.Condition{Type: sessionsv1alpha1.ConditionReady, Status: status, Reason: reason, Message: msg}
	meta.SetStatusCondition(&s.Status.Conditions, ready)
	ownerflow.SetStalled(&s.Status.Conditions, ready)
}

// finalizeLegacy honours the legacy TranscriptFinalizer of a session deleted while it
// carried it (made by an older manager, deleted before this one took it off): it archives
// the transcript, releases the sandbox claim, and lets the object go. Without it there is
// nothing to do here: the delete's cleanup runs once the object is gone (cleanup.go).
func (r *AgentSessionReconciler) finalizeLegacy(ctx context.Context, s *sessionsv1alpha1.AgentSession) error {
	if !controllerutil.ContainsFinalizer(s, TranscriptFinalizer) {
		return nil
	}
	if err := r.archive(ctx, s); err != nil {
		return err
	}
	if r.Sandboxes {
		if err := sandbox.Release(ctx, r.Client, s); err != nil {
			return err
		}
	}
	return client.IgnoreNotFound(r.removeFinalizer(ctx, s))
}

// dropLegacyFinalizer takes the legacy TranscriptFinalizer off a live session: one patch,
// once per session an older manager made.
func (r *AgentSessionReconciler) dropLegacyFinalizer(ctx context.Context, s *sessionsv1alpha1.AgentSession) error {
	if !controllerutil.ContainsFinalizer(s, TranscriptFinalizer) {
		return nil
	}
	ctrl.LoggerFrom(ctx).V(2).Info("removing the legacy transcript finalizer", "agentSession", klog.KObj(s))
	return r.removeFinalizer(ctx, s)
}

// removeFinalizer patches the TranscriptFinalizer away, under the optimistic lock: a merge
// patch replaces the whole list, and another controller's finalizer added meanwhile must
// not go with it (a conflict is retried).
func (r *AgentSessionReconciler) removeFinalizer(ctx context.Context, s *sessionsv1alpha1.AgentSession) error {
	patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(s, TranscriptFinalizer)
	return r.Patch(ctx, s, patch)
}

// archive archives the session's transcript and removes its workspace (archiveTranscript).
func (r *AgentSessionReconciler) archive(ctx context.Context, s *sessionsv1alpha1.AgentSession) error {
	if s.Status.SessionID == "" {
		return nil
	}
	return archiveTranscript(ctx, r.Store, r.WorkspaceRoot, s.Namespace, s.Status.SessionID)
}

// SetupWith registers the reconciler with concurrency workers: a new session costs a
// transcript and a status write, one after another, so one worker
// initializes a few dozen sessions a second and a burst of thousands waits minutes for its
// transcripts. The reconciler keeps no state of its own; the work queue never hands two
// workers one session.
func (r *AgentSessionReconciler) SetupWith(b *builder.Builder, concurrency int) error {
	if r.Runner != nil {
		// Reports and the end of the compaction steps the session asked for (compact.go).
		b = b.WatchesRawSource(source.Channel(r.Runner.Wake(turns.WakeAgentSession), reportWake(r.StatusInterval)))
	}
	return r.watchSandboxes(b).For(&sessionsv1alpha1.AgentSession{}).WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("agentsession").Complete(ownerflow.RequeueConflicts(r))
}
