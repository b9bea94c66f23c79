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

package subagentrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/announce"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/protocol"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// SubagentRunReconciler runs sessions_spawn as an object through its steps: resolveAgent,
// ensureChild (the child session), accept (its attachments), task under the run timeout,
// announce in the requester, cleanup (delete the child, or ask it to archive itself later).
type SubagentRunReconciler struct {
	ownerflow.OwnerDeps
	// Announcer delivers the announce step's reply.
	Announcer *announce.Announcer
	// WorkspaceRoot holds the sub-agent workspaces, where a run's attachments land.
	WorkspaceRoot string
	// Sandboxes puts a sandboxed child's attachments in its sandbox; nil (sandboxes off)
	// puts every child's in WorkspaceRoot.
	Sandboxes SandboxWorkspaces
	// TTL deletes a finished run whose spec.ttlSecondsAfterFinished is unset; 0 keeps it.
	TTL time.Duration

	// stepRunner runs the steps with the fields above; wire sets it.
	ownerflow.StepRunner[*sessionsv1alpha1.SubagentRun]
}

// wire sets up the step runner from the fields; setupWith calls it, and so do the tests.
func (r *SubagentRunReconciler) wire() *SubagentRunReconciler {
	r.StepRunner = ownerflow.NewStepRunner(r.OwnerDeps, turns.OwnerSubagentRun, ownerflow.OwnerKind[*sessionsv1alpha1.SubagentRun](r), nil, awaitingRun)
	return r
}

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=subagentruns,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=subagentruns/status,verbs=get;update;patch

func (r *SubagentRunReconciler) Steps() []ownerflow.Step[*sessionsv1alpha1.SubagentRun] {
	return []ownerflow.Step[*sessionsv1alpha1.SubagentRun]{
		{Name: "cancel", Run: r.cancel},
		{Name: "resolveAgent", Run: r.resolveAgent},
		{Name: "ensureChild", Run: r.ensureChild},
		{Name: "accept", Run: r.accept},
		{Name: "task", Run: r.task},
		{Name: "announce", Run: r.announce},
		{Name: "cleanup", Run: r.cleanup},
	}
}

func (r *SubagentRunReconciler) Observe(run *sessionsv1alpha1.SubagentRun) {
	reason, msg := "Running", "the run's task is running"
	if p := run.Status.Phase; p != "" && p != sessionsv1alpha1.RunPending && p != sessionsv1alpha1.RunRunning {
		reason, msg = "Announcing", "the run's task ended "+string(p)+"; its announce and cleanup are running"
	}
	ownerflow.SetProgress(&run.Status.Conditions, reason, msg)
}
func (r *SubagentRunReconciler) Phase(run *sessionsv1alpha1.SubagentRun) string {
	return string(run.Status.Phase)
}

// cancel marks the run Cancelled when spec.cancel asks and cancels what its child session
// started; the announce (Status: cancelled) and the cleanup still run.
func (r *SubagentRunReconciler) cancel(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun]) (bool, error) {
	run, st := f.Obj, &f.Obj.Status
	if !r.AbortForCancel(f, run.Spec.Cancel && st.Phase != sessionsv1alpha1.RunCancelled) {
		return true, nil
	}
	if err := ownerflow.CancelStarted(ctx, r.Client, run, st.ChildSessionKey); err != nil {
		return false, err
	}
	st.Phase, st.Notes = sessionsv1alpha1.RunCancelled, "cancelled by spec.cancel"
	if st.Stats == nil {
		var child *sessionsv1alpha1.AgentSession
		if st.ChildSessionKey != "" {
			var err error
			if child, err = r.Lookup.SessionByKey(ctx, run.Namespace, st.ChildSessionKey); err != nil {
				return false, err
			}
		}
		st.Stats = cancelledStats(st, child, r.Clock.Now())
	}
	f.Event(corev1.EventTypeNormal, "Cancelled", "run cancelled by spec.cancel; its task was aborted")
	return true, nil
}

// AfterFinish deletes the finished run once its TTL has passed, never before its kept child
// was archived.
func (r *SubagentRunReconciler) AfterFinish(ctx context.Context, run *sessionsv1alpha1.SubagentRun) (ctrl.Result, error) {
	def := r.TTL
	if run.Spec.Mode == sessionsv1alpha1.ModeSession {
		def = 0 // the run holds its persistent session: only an explicit TTL deletes it
	}
	return ownerflow.DeleteAfterTTL(ctx, r.Client, r.Clock, run, run.Spec.TTLSecondsAfterFinished, def, run.Status.CompletedAt, run.Status.ArchiveAt)
}

// resolveAgent finds the requesting session (nil when a person or a system spawned) and
// the Agent the child runs under, through the same lookup.GatherSpawn as admission.
func (r *SubagentRunReconciler) resolveAgent(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun]) (bool, error) {
	run := f.Obj
	facts, err := r.Lookup.GatherSpawn(ctx, run.Namespace, &run.Spec)
	if err != nil {
		return false, err
	}
	f.Requester = facts.Requester
	if facts.Target == nil && run.Status.Phase != sessionsv1alpha1.RunCancelled {
		r.fail(f, fmt.Sprintf("agent %q not found", facts.TargetID))
		return false, nil
	}
	f.Agent = facts.Target
	return true, nil
}

// childKey is agent:<agentId>:subagent:<uuid>, the uuid being the run's UID unless the
// spawning tool fixed the key up front.
func childKey(run *sessionsv1alpha1.SubagentRun, agentID string) string {
	if k := run.Annotations[sessionsv1alpha1.ChildSessionKeyAnnotation]; k != "" {
		return k
	}
	return sessionkey.SubagentKey(agentID, string(run.UID))
}

// ensureChild finds the child session, or creates it owned by the run. A child that was
// made and is gone fails the run: there is nothing to run in.
func (r *SubagentRunReconciler) ensureChild(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun]) (bool, error) {
	run, st := f.Obj, &f.Obj.Status
	key := st.ChildSessionKey
	if key == "" && f.Agent != nil {
		key = childKey(run, f.Agent.Name)
	}
	var child *sessionsv1alpha1.AgentSession
	if key != "" {
		var err error
		if child, err = r.Lookup.SessionByKey(ctx, run.Namespace, key); err != nil {
			return false, err
		}
	}
	switch {
	case st.Phase == sessionsv1alpha1.RunCancelled:
		f.Session = child
		return true, nil
	case child != nil && !metav1.IsControlledBy(child, run):
		// A child is always new: a session of that key that this run did not create (admission
		// refuses such hints, but a create can still race it) is never run in or cleaned up.
		r.fail(f, fmt.Sprintf("session %s exists and was not created by this run; a sub-agent runs only in a new session", key))
		return false, nil
	case child != nil && child.Status.SessionID == "":
		f.RequeueAfter(ownerflow.NotReadyRequeue) // the child's status change wakes the run too
		return false, nil
	case child != nil:
		f.Session = child
		return true, nil
	case st.ChildSessionKey != "":
		r.fail(f, fmt.Sprintf("child session %s was deleted before the run finished; there is nothing to run in", key))
		return false, nil
	}
	parent := run.Spec.RequesterSessionKey
	child = &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: run.Namespace},
		Spec: sessionsv1alpha1.AgentSessionSpec{
			Key: key, AgentID: f.Agent.Name, Label: run.Spec.Label, Model: run.Spec.Model, ThinkingLevel: run.Spec.Thinking,
			SpawnedBy: parent, ParentSessionKey: parent, Sandboxed: f.Agent.Spec.Sandbox.Enabled,
			DeliveryContext: threadContext(run, f.Requester),
		},
	}
	if err := controllerutil.SetControllerReference(run, child, r.Scheme()); err != nil {
		return false, err
	}
	if err := r.Create(ctx, child); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, err
	}
	f.Event(corev1.EventTypeNormal, "ChildCreated", "child session %s created", key)
	f.RequeueAfter(ownerflow.NotReadyRequeue)
	return false, nil
}

// accept records the spawn's acceptance with its attachments materialized.
func (r *SubagentRunReconciler) accept(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun]) (bool, error) {
	run, st, child := f.Obj, &f.Obj.Status, f.Session
	if st.Status != "" || st.Phase == sessionsv1alpha1.RunCancelled {
		return true, nil
	}
	if len(run.Spec.Attachments) > 0 {
		if r.Sandboxes != nil && child.Spec.Sandboxed {
			if done, err := r.attachInSandbox(ctx, f); !done || err != nil {
				return false, err
			}
		} else {
			dir := AttachmentsDir(r.WorkspaceRoot, run.Namespace, child.Status.SessionID, string(run.UID))
			receipts, err := MaterializeAttachments(dir, run.Spec.Attachments)
			if err != nil {
				r.fail(f, fmt.Sprintf("attachments: %v", err))
				return false, nil
			}
			st.Attachments, st.AttachmentsDir = receipts, dir
		}
	}
	now := metav1.NewTime(r.Clock.Now())
	st.Status, st.RunID, st.ChildSessionKey, st.Phase, st.StartedAt = sessionsv1alpha1.SpawnAccepted, string(run.UID), child.Spec.Key, sessionsv1alpha1.RunRunning, &now
	f.Event(corev1.EventTypeNormal, "Accepted", "running in %s", child.Spec.Key)
	return true, nil
}

// runTimeout is spec.runTimeoutSeconds, else the Agent's subagents.runTimeoutSeconds; 0 is none.
func runTimeout(run *sessionsv1alpha1.SubagentRun, agent *sessionsv1alpha1.Agent) time.Duration {
	if t := run.Spec.RunTimeoutSeconds; t != nil {
		return time.Duration(*t) * time.Second
	}
	if t := agent.Spec.Subagents.RunTimeoutSeconds; t != nil {
		return time.Duration(*t) * time.Second
	}
	return 0
}

// task runs the task in the child under the run timeout and records the outcome.
func (r *SubagentRunReconciler) task(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun]) (bool, error) {
	run, st, child := f.Obj, &f.Obj.Status, f.Session
	if st.Phase != sessionsv1alpha1.RunRunning && st.Phase != sessionsv1alpha1.RunAwaitingApproval {
		return true, nil
	}
	res, ok, err := r.RunTurn(ctx, f, "task", func() turns.TurnRequest {
		req := turns.TurnRequest{SessionKey: child.Spec.Key,
			Input: ownerflow.TextMessage(taskInput(run, r.Sandboxes != nil && child.Spec.Sandboxed), &transcript.Provenance{Kind: transcript.ProvenanceInterSession,
				SourceSessionKey: run.Spec.RequesterSessionKey, SourceTool: "sessions_spawn"}),
			SystemContext: protocol.SubagentTask(run.Spec.RequesterSessionKey, run.Spec.Label,
				policy.SubagentSessionTools(f.Agent.Spec.Subagents.Tools, sessionToolNames))}
		if t := runTimeout(run, f.Agent); t > 0 {
			req.Deadline = st.StartedAt.Add(t)
		}
		req.ForkFrom = forkSource(run, f.Requester)
		return req
	})
	if !ok || err != nil {
		return false, err
	}
	st.Result, st.ResultSeq = ownerflow.StatusText(res.Text, res.ReplySeq)
	if res.Text == "" {
		st.Result, st.ResultSeq = ownerflow.StatusText(res.LastToolResult, res.ToolResultSeq)
	}
	elapsed := res.Finished.Sub(res.Started)
	st.Stats = runStats(child.Spec.Key, child, elapsed, res.InputTokens, res.OutputTokens)
	st.Usage = usage.Add(st.Usage, res.Usage())
	switch {
	case res.Currency != "":
		st.Stats.Cost = usage.FormatNanos(res.CostNanos) + " " + res.Currency
	case res.Cost > 0:
		st.Stats.Cost = fmt.Sprintf("$%.4f", res.Cost)
	}
	switch {
	case res.Err == nil:
		st.Phase = sessionsv1alpha1.RunSucceeded
	case errors.Is(res.Err, turns.ErrDeadline):
		st.Phase, st.Notes = sessionsv1alpha1.RunTimedOut, fmt.Sprintf("aborted after the run timeout of %s", runTimeout(run, f.Agent))
	case errors.Is(res.Err, budget.ErrExceeded):
		if err := r.stopForBudget(ctx, f, res.Err.Error()); err != nil {
			return false, err
		}
	default:
		st.Phase, st.Notes = sessionsv1alpha1.RunFailed, textutil.Truncate(res.Err.Error(), ownerflow.MaxErrorText)
	}
	f.Event(corev1.EventTypeNormal, string(st.Phase), "task %s in %s", st.Phase, elapsed.Round(time.Millisecond))
	return true, nil
}

// cancelledStats are the stats of a run cancelled before its task recorded any: the time
// since it started, the tokens of its turns so far, and its child (nil before it exists).
func cancelledStats(st *sessionsv1alpha1.SubagentRunStatus, child *sessionsv1alpha1.AgentSession, now time.Time) *sessionsv1alpha1.RunStats {
	var ran time.Duration
	if st.StartedAt != nil {
		ran = now.Sub(st.StartedAt.Time)
	}
	var in, out int64
	if st.Usage != nil {
		in, out = st.Usage.InputTokens, st.Usage.OutputTokens
	}
	return runStats(st.ChildSessionKey, child, ran, in, out)
}

// runStats are the stats a run's announce reports; child is nil when it does not exist.
func runStats(childKey string, child *sessionsv1alpha1.AgentSession, ran time.Duration, in, out int64) *sessionsv1alpha1.RunStats {
	stats := &sessionsv1alpha1.RunStats{Runtime: ran.Round(time.Millisecond).String(), InputTokens: in, OutputTokens: out, SessionKey: childKey}
	if child != nil {
		stats.SessionID, stats.TranscriptPath = child.Status.SessionID, child.Status.TranscriptPath
	}
	return stats
}

// sessionToolNames are the session tools' names, in the order they are offered.
var sessionToolNames = func() []string {
	var names []string
	for _, t := range sessiontools.All() {
		names = append(names, t.Name)
	}
	return names
}()

// taskInput is the task, with where its attachments are (in its sandbox when sandboxed).
func taskInput(run *sessionsv1alpha1.SubagentRun, sandboxed bool) string {
	in := run.Spec.Task
	if run.Status.AttachmentsDir != "" {
		in = fmt.Sprintf("%s\n\nAttachments (%d files, manifest %s): %s", in, len(run.Status.Attachments),
			policy.AttachmentManifestName, run.Status.AttachmentsDir)
	}
	if a := run.Spec.AttachAs; a != nil && a.MountPath != "" && !sandboxed {
		// An unsandboxed child has no sandbox to put its attachments at mountPath.
		in += fmt.Sprintf("\nattachAs mountPath %s (recorded only: this session has no sandbox, so nothing is placed there)", a.MountPath)
	}
	return in
}

// announce runs the announce step in the requester. A cancelled run announces under its
// own step name, so an announce aborted by the cancel is not reused.
func (r *SubagentRunReconciler) announce(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun]) (bool, error) {
	run, st, requester := f.Obj, &f.Obj.Status, f.Requester
	if st.Announce != nil && st.Announce.Status != sessionsv1alpha1.AnnounceDelivering {
		return true, nil
	}
	if requester == nil || requester.Status.SessionID == "" {
		st.Announce = &sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceSkipped, Reason: "no requester session to announce to"}
		return true, nil
	}
	step := "announce"
	if st.Phase == sessionsv1alpha1.RunCancelled {
		step = "announce-cancelled"
	}
	outcome := runOutcome(st)
	var err error
	if outcome.Result, err = r.WholeText(ctx, run.Namespace, st.ChildSessionKey, st.Result, st.ResultSeq); err != nil {
		return false, err
	}
	res, ok, err := r.RunTurn(ctx, f, step, func() turns.TurnRequest {
		return turns.TurnRequest{SessionKey: requester.Spec.Key,
			Input: ownerflow.TextMessage(announce.SubagentAnnounceInput(outcome), &transcript.Provenance{Kind: transcript.ProvenanceSubagentAnnounce,
				SourceSessionKey: st.ChildSessionKey, SourceTool: "sessions_spawn"}),
			SystemContext: protocol.SubagentAnnounce(st.ChildSessionKey)}
	})
	if !ok || err != nil {
		return false, err
	}
	if st.Announce == nil {
		st.Usage = usage.Add(st.Usage, res.Usage())
	}
	// The channel gets the normalised announce, not the model's words as they are: Status
	// and the stats line are the runtime's.
	res.Text = announce.SubagentAnnounceReply(outcome, res.Text)
	var wait time.Duration
	st.Announce, wait = r.Announcer.Outcome(ctx, announce.Input{Session: requester, Key: turns.TurnID(run.UID, step),
		ThreadID: threadOf(run), Bind: run.Spec.Thread, Prev: st.Announce}, res)
	if st.Announce.Status == sessionsv1alpha1.AnnounceDelivering {
		f.RequeueAfter(max(wait, ownerflow.NotReadyRequeue))
		return false, nil
	}
	announce.Event(f, st.Announce)
	return true, nil
}

// runOutcome is the finished run as its announce reports it.
func runOutcome(st *sessionsv1alpha1.SubagentRunStatus) announce.RunOutcome {
	o := announce.RunOutcome{Phase: st.Phase, BudgetExceeded: budgetStopped(st), Result: st.Result, Notes: st.Notes}
	if st.Stats != nil {
		o.Stats = *st.Stats
	}
	return o
}

// cleanup ends the run: the child is deleted (cleanup delete) or asked to archive itself
// after the TTL.
func (r *SubagentRunReconciler) cleanup(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun]) (bool, error) {
	run, st, child := f.Obj, &f.Obj.Status, f.Session
	if err := r.rollUp(ctx, f); err != nil {
		return false, err
	}
	switch {
	case child == nil:
		r.finish(f, st.Phase, "no child session to clean up")
	case run.Spec.Mode == sessionsv1alpha1.ModeSession:
		// A persistent session: it stays Active for later sends from its requester, and goes
		// with this run when the run is deleted (it is the child's controller).
		r.finish(f, st.Phase, "child session kept (mode session) until this SubagentRun is deleted")
	case run.Spec.Cleanup == sessionsv1alpha1.CleanupDelete:
		if err := r.Delete(ctx, child); client.IgnoreNotFound(err) != nil {
			return false, err
		}
		r.finish(f, st.Phase, "child session deleted after the announce")
	default:
		pol, err := r.Lookup.SessionPolicy(ctx, run.Namespace)
		if err != nil {
			return false, err
		}
		at := metav1.NewTime(r.Clock.Now().Add(archiveAfter(pol, f.Agent)))
		if err := askToArchive(ctx, r.Client, child, at.Time); err != nil {
			return false, err
		}
		st.ArchiveAt = &at
		r.finish(f, st.Phase, "child session kept until "+at.UTC().Format(time.RFC3339))
	}
	return true, nil
}

// rollUp adds to the run's usage that of the runs its child spawned (each of which rolled up
// its own children when it finished), once, as the run finishes: a parent reports its whole
// tree, and keeps a child's share when the child is deleted later.
func (r *SubagentRunReconciler) rollUp(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun]) error {
	key := f.Obj.Status.ChildSessionKey
	if key == "" {
		return nil
	}
	var spawned sessionsv1alpha1.SubagentRunList
	if err := r.List(ctx, &spawned, client.InNamespace(f.Obj.Namespace), client.MatchingFields{cacheindex.RunRequester: key}); err != nil {
		return err
	}
	for i := range spawned.Items {
		f.Obj.Status.Usage = usage.Merge(f.Obj.Status.Usage, spawned.Items[i].Status.Usage)
	}
	return nil
}

func (r *SubagentRunReconciler) fail(f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun], msg string) {
	f.Obj.Status.Notes = textutil.Truncate(msg, ownerflow.MaxErrorText)
	r.finish(f, sessionsv1alpha1.RunFailed, msg)
}

// finish ends the run in phase with its one terminal condition.
func (r *SubagentRunReconciler) finish(f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun], phase sessionsv1alpha1.RunPhase, msg string) {
	run, st := f.Obj, &f.Obj.Status
	st.Phase = phase
	if st.Status == "" {
		st.Status, st.RunID = sessionsv1alpha1.SpawnAccepted, string(run.UID)
	}
	now := metav1.NewTime(r.Clock.Now())
	st.CompletedAt = &now
	o := ownerflow.Failed
	switch phase {
	case sessionsv1alpha1.RunSucceeded:
		o = ownerflow.Succeeded
	case sessionsv1alpha1.RunCancelled:
		o = ownerflow.Cancelled
	}
	reason := string(phase)
	if budgetStopped(st) {
		reason = sessionsv1alpha1.ReasonBudgetExceeded
	}
	ownerflow.SetOutcome(&st.Conditions, o, reason, msg)
	f.Event(corev1.EventTypeNormal, "Completed", "%s: %s", phase, msg)
	f.Log.V(2).Info("run finished", "phase", phase)
}

// SetupWith wires the step runner and registers the reconciler, woken by the engine when its turns end and by
// its child sessions' changes (the transcript becoming ready).
func (r *SubagentRunReconciler) SetupWith(b *builder.Builder, concurrency int) error {
	r.wire()
	return b.
		For(&sessionsv1alpha1.SubagentRun{}).
		Owns(&sessionsv1alpha1.AgentSession{}).
		Owns(&sessionsv1alpha1.ToolApproval{}).
		WatchesRawSource(source.Channel(r.Runner.Wake(turns.OwnerSubagentRun), &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("subagentrun").Complete(ownerflow.RequeueConflicts(r))
}
