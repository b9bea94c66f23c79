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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/indexer"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/runtime"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// SubagentRunReconciler runs sessions_spawn as an object: the child session, its
// attachments, the task under the run timeout, the announce in the requester, then the
// child's cleanup or archive.
type SubagentRunReconciler struct {
	client.Client
	Runner   runtime.Runner
	Clock    clock.Clock
	Recorder recorder.EventRecorder
	// APIReader confirms a cache miss of an Agent before a run fails for want of it.
	APIReader     client.Reader
	WorkspaceRoot string
	announcer     *announcer
	stale         staleReads
}

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=subagentruns,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=subagentruns/status,verbs=get;update;patch

func (r *SubagentRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	run := &v1.SubagentRun{}
	if err := r.Get(ctx, req.NamespacedName, run); err != nil {
		if apierrors.IsNotFound(err) {
			r.stale.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if meta.IsStatusConditionTrue(run.Status.Conditions, v1.ConditionCompleted) {
		r.Runner.Forget(turnID(run, "task"))
		r.Runner.Forget(turnID(run, "announce"))
		r.stale.forget(req.NamespacedName)
		return r.archiveWhenDue(ctx, run)
	}
	if r.stale.stale(run) {
		return ctrl.Result{}, nil
	}
	old := run.Status.DeepCopy()
	res, err := r.reconcile(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !equality.Semantic.DeepEqual(old, &run.Status) {
		run.Status.ObservedGeneration = run.Generation
		replaced := run.ResourceVersion
		if err := r.Status().Update(ctx, run); err != nil {
			// A stale cache read: the next reconcile sees the newer object.
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: notReadyRequeue}, nil
			}
			return ctrl.Result{}, err
		}
		r.stale.wrote(run, replaced)
	}
	return res, nil
}

func (r *SubagentRunReconciler) reconcile(ctx context.Context, run *v1.SubagentRun) (ctrl.Result, error) {
	st := &run.Status
	requester, err := r.requester(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	agentID := policy.TargetAgentID(&run.Spec, requester)
	agent, err := indexer.Agent(ctx, r.Client, r.APIReader, run.Namespace, agentID)
	if err != nil {
		return ctrl.Result{}, err
	}
	if agent == nil {
		r.finish(run, v1.RunFailed, fmt.Sprintf("agent %q not found", agentID))
		return ctrl.Result{}, nil
	}
	child, err := r.ensureChild(ctx, run, agentID, agent)
	if err != nil || child == nil || child.Status.SessionID == "" {
		return ctrl.Result{RequeueAfter: notReadyRequeue}, err
	}
	if st.Status == "" {
		if err := r.accept(run, child); err != nil {
			r.finish(run, v1.RunFailed, err.Error())
			return ctrl.Result{}, nil
		}
	}
	if st.Phase == v1.RunRunning {
		done, err := r.task(ctx, run, child, agent)
		if !done || err != nil {
			return ctrl.Result{}, err
		}
	}
	if st.Announce == nil {
		done, err := r.announce(ctx, run, requester)
		if !done || err != nil {
			return ctrl.Result{}, err
		}
	}
	return r.complete(ctx, run, child, agent)
}

// requester is the requesting session, nil when a person or a system spawned.
func (r *SubagentRunReconciler) requester(ctx context.Context, run *v1.SubagentRun) (*v1.AgentSession, error) {
	if run.Spec.RequesterSessionKey == "" {
		return nil, nil
	}
	return indexer.SessionByKey(ctx, r.Client, run.Namespace, run.Spec.RequesterSessionKey)
}

// childKey is agent:<agentId>:subagent:<uuid>, the uuid being the run's UID unless the
// spawning tool fixed the key up front.
func childKey(run *v1.SubagentRun, agentID string) string {
	if k := run.Annotations[v1.ChildSessionKeyAnnotation]; k != "" {
		return k
	}
	return sessionkey.SubagentKey(agentID, string(run.UID))
}

// ensureChild creates the child session, owned by the run.
func (r *SubagentRunReconciler) ensureChild(ctx context.Context, run *v1.SubagentRun, agentID string, agent *v1.Agent) (*v1.AgentSession, error) {
	key := childKey(run, agentID)
	child, err := indexer.SessionByKey(ctx, r.Client, run.Namespace, key)
	if err != nil || child != nil {
		return child, err
	}
	if run.Status.ChildSessionKey != "" {
		// The child was made and is gone (deleted by cleanup, or by hand): nothing to run in.
		return nil, nil
	}
	parent := run.Spec.RequesterSessionKey
	child = &v1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: run.Namespace},
		Spec: v1.AgentSessionSpec{
			Key: key, AgentID: agentID, Label: run.Spec.Label, Model: run.Spec.Model, ThinkingLevel: run.Spec.Thinking,
			SpawnedBy: parent, ParentSessionKey: parent, Sandboxed: agent.Spec.Sandbox.Enabled,
		},
	}
	if err := controllerutil.SetControllerReference(run, child, r.Scheme()); err != nil {
		return nil, err
	}
	if err := r.Create(ctx, child); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	r.event(run, corev1.EventTypeNormal, "ChildCreated", "child session %s created", key)
	return nil, nil
}

// accept records the spawn's acceptance with its attachments materialized.
func (r *SubagentRunReconciler) accept(run *v1.SubagentRun, child *v1.AgentSession) error {
	st := &run.Status
	if len(run.Spec.Attachments) > 0 {
		dir := AttachmentsDir(r.WorkspaceRoot, run.Namespace, child.Status.SessionID, string(run.UID))
		receipts, err := MaterializeAttachments(dir, run.Spec.Attachments)
		if err != nil {
			return fmt.Errorf("attachments: %w", err)
		}
		st.Attachments, st.AttachmentsDir = receipts, dir
	}
	now := metav1.NewTime(r.Clock.Now())
	st.Status, st.RunID, st.ChildSessionKey, st.Phase, st.StartedAt = "accepted", string(run.UID), child.Spec.Key, v1.RunRunning, &now
	r.event(run, corev1.EventTypeNormal, "Accepted", "running in %s", child.Spec.Key)
	return nil
}

// runTimeout is spec.runTimeoutSeconds, else the Agent's subagents.runTimeoutSeconds; 0 is none.
func runTimeout(run *v1.SubagentRun, agent *v1.Agent) time.Duration {
	if t := run.Spec.RunTimeoutSeconds; t != nil {
		return time.Duration(*t) * time.Second
	}
	if t := agent.Spec.Subagents.RunTimeoutSeconds; t != nil {
		return time.Duration(*t) * time.Second
	}
	return 0
}

// task runs the task in the child under the run timeout and records the outcome.
func (r *SubagentRunReconciler) task(ctx context.Context, run *v1.SubagentRun, child *v1.AgentSession, agent *v1.Agent) (bool, error) {
	st := &run.Status
	id := turnID(run, "task")
	res, ok := r.Runner.Result(id)
	if !ok {
		req := runtime.TurnRequest{
			ID: id, Namespace: run.Namespace, SessionKey: child.Spec.Key,
			Input: textMessage(taskInput(run), &transcript.Provenance{Kind: transcript.ProvenanceInterSession,
				SourceSessionKey: run.Spec.RequesterSessionKey, SourceTool: "sessions_spawn"}),
			Owner: runtime.Owner{Kind: runtime.OwnerSubagentRun, NamespacedName: client.ObjectKeyFromObject(run)},
		}
		if t := runTimeout(run, agent); t > 0 {
			req.Deadline = st.StartedAt.Add(t)
		}
		return false, r.Runner.Submit(ctx, req)
	}
	st.Result = res.Text
	if st.Result == "" {
		st.Result = res.LastToolResult
	}
	elapsed := res.Finished.Sub(res.Started)
	st.Stats = &v1.RunStats{
		Runtime: elapsed.Round(time.Millisecond).String(), InputTokens: res.InputTokens, OutputTokens: res.OutputTokens,
		SessionKey: child.Spec.Key, SessionID: child.Status.SessionID, TranscriptPath: child.Status.TranscriptPath,
	}
	if res.Cost > 0 {
		st.Stats.Cost = fmt.Sprintf("$%.4f", res.Cost)
	}
	switch {
	case res.Err == nil:
		st.Phase = v1.RunSucceeded
	case errors.Is(res.Err, runtime.ErrDeadline):
		st.Phase, st.Notes = v1.RunTimedOut, fmt.Sprintf("aborted after the run timeout of %s", runTimeout(run, agent))
	default:
		st.Phase, st.Notes = v1.RunFailed, truncate(res.Err.Error(), 1024)
	}
	r.event(run, corev1.EventTypeNormal, string(st.Phase), "task %s in %s", st.Phase, elapsed.Round(time.Millisecond))
	return true, nil
}

// taskInput is the task, with where its attachments are.
func taskInput(run *v1.SubagentRun) string {
	if run.Status.AttachmentsDir == "" {
		return run.Spec.Task
	}
	return fmt.Sprintf("%s\n\nAttachments (%d files, manifest %s): %s", run.Spec.Task, len(run.Status.Attachments),
		policy.AttachmentManifestName, run.Status.AttachmentsDir)
}

// announce runs the announce step in the requester.
func (r *SubagentRunReconciler) announce(ctx context.Context, run *v1.SubagentRun, requester *v1.AgentSession) (bool, error) {
	st := &run.Status
	if requester == nil || requester.Status.SessionID == "" {
		st.Announce = &v1.Announce{Status: v1.AnnounceSkipped, Reason: "no requester session to announce to"}
		return true, nil
	}
	id := turnID(run, "announce")
	res, ok := r.Runner.Result(id)
	if !ok {
		outcome := RunOutcome{Phase: st.Phase, Result: st.Result, Notes: st.Notes}
		if st.Stats != nil {
			outcome.Stats = *st.Stats
		}
		return false, r.Runner.Submit(ctx, runtime.TurnRequest{
			ID: id, Namespace: run.Namespace, SessionKey: requester.Spec.Key,
			Input: textMessage(SubagentAnnounceInput(outcome), &transcript.Provenance{Kind: transcript.ProvenanceSubagentAnnounce,
				SourceSessionKey: st.ChildSessionKey, SourceTool: "sessions_spawn"}),
			Owner: runtime.Owner{Kind: runtime.OwnerSubagentRun, NamespacedName: client.ObjectKeyFromObject(run)},
		})
	}
	if res.Err != nil {
		st.Announce = &v1.Announce{Status: v1.AnnounceFailed, Reason: "the announce turn failed: " + truncate(res.Err.Error(), 512)}
	} else {
		st.Announce = r.announcer.announce(ctx, requester, res.Text, id)
	}
	if typ, ok := announceEventType(st.Announce); ok {
		r.event(run, typ, "Announce", "announce %s: %s", st.Announce.Status, st.Announce.Reason)
	}
	return true, nil
}

// complete ends the run: the child is deleted (cleanup delete) or archived after the TTL.
func (r *SubagentRunReconciler) complete(ctx context.Context, run *v1.SubagentRun, child *v1.AgentSession, agent *v1.Agent) (ctrl.Result, error) {
	st := &run.Status
	if run.Spec.Cleanup == v1.CleanupDelete {
		if err := r.Delete(ctx, child); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		r.finish(run, st.Phase, "child session deleted after the announce")
		return ctrl.Result{}, nil
	}
	pol, err := sessionPolicy(ctx, r.Client, run.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	at := metav1.NewTime(r.Clock.Now().Add(archiveAfter(pol, agent)))
	st.ArchiveAt = &at
	r.finish(run, st.Phase, "child session kept until "+at.UTC().Format(time.RFC3339))
	return ctrl.Result{RequeueAfter: at.Sub(r.Clock.Now())}, nil
}

func (r *SubagentRunReconciler) finish(run *v1.SubagentRun, phase v1.RunPhase, msg string) {
	st := &run.Status
	st.Phase = phase
	if st.Status == "" {
		st.Status = "accepted"
		st.RunID = string(run.UID)
	}
	now := metav1.NewTime(r.Clock.Now())
	st.CompletedAt = &now
	if phase == v1.RunFailed && st.Notes == "" {
		st.Notes = msg
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1.ConditionCompleted, Status: metav1.ConditionTrue,
		Reason: string(phase), Message: truncate(msg, 512), ObservedGeneration: run.Generation})
	r.event(run, corev1.EventTypeNormal, "Completed", "%s: %s", phase, msg)
}

func (r *SubagentRunReconciler) event(run *v1.SubagentRun, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(run, nil, typ, reason, reason, format, args...)
	}
}

// SetupWithManager registers the reconciler, woken by the engine when its turns end and by
// its child sessions' changes (the transcript becoming ready).
func (r *SubagentRunReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.SubagentRun{}).
		Owns(&v1.AgentSession{}).
		WatchesRawSource(source.Channel(r.Runner.Wake(runtime.OwnerSubagentRun), &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("subagentrun").Complete(r)
}
