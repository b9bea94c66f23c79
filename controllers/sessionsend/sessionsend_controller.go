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

package sessionsend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/announce"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/protocol"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// SessionSendReconciler runs sessions_send as an object through its steps: resolveTarget,
// roundOne in the target, replyBack (the ping-pong with the requester), announce in the
// target, complete. Every turn has an id derived from the send's UID and step, so a
// restarted manager submits the same turns again and the engine's idempotent appends make
// each happen once. Status is written when an outcome a person waits for is known
// (accepted, timeout, ok or error, each ping-pong turn, completion): a person's send
// costs two API writes with its create.
type SessionSendReconciler struct {
	ownerflow.OwnerDeps
	// Announcer delivers the announce step's reply.
	Announcer *announce.Announcer
	// TTL deletes a finished send whose spec.ttlSecondsAfterFinished is unset; 0 keeps it.
	TTL time.Duration
	// finishedTTL, when set, deletes the sends this reconciler finishes after their TTL:
	// the manager's cache drops finished sends (cacheindex.UnfinishedSends).
	FinishedTTL *SendTTL
	// feed, when set, hands the store the sends this reconciler finishes (Feed).
	Feed *Feed

	// stepRunner runs the steps with the fields above; wire sets it.
	ownerflow.StepRunner[*sessionsv1alpha1.SessionSend]
}

// wire sets up the step runner from the fields; setupWith calls it, and so do the tests.
func (r *SessionSendReconciler) wire() *SessionSendReconciler {
	r.StepRunner = ownerflow.NewStepRunner(r.OwnerDeps, turns.OwnerSessionSend, ownerflow.OwnerKind[*sessionsv1alpha1.SessionSend](r), r.finished, awaitingSend)
	return r
}

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionsends,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionsends/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=agents,verbs=get;list;watch

func (r *SessionSendReconciler) Steps() []ownerflow.Step[*sessionsv1alpha1.SessionSend] {
	return []ownerflow.Step[*sessionsv1alpha1.SessionSend]{
		{Name: "cancel", Run: r.cancel},
		{Name: "resolveTarget", Run: r.resolveTarget},
		{Name: "command", Run: r.command},
		{Name: "roundOne", Run: r.roundOne},
		{Name: "replyBack", Run: r.replyBack},
		{Name: "announce", Run: r.announce},
		{Name: "complete", Run: r.complete},
	}
}

func (r *SessionSendReconciler) Observe(s *sessionsv1alpha1.SessionSend) {
	phase := s.Status.Phase
	if phase == "" {
		phase = sessionsv1alpha1.SendRunning
	}
	ownerflow.SetProgress(&s.Status.Conditions, string(phase), "the send is in phase "+string(phase))
}
func (r *SessionSendReconciler) Phase(s *sessionsv1alpha1.SessionSend) string {
	return string(s.Status.Phase)
}

// cancel ends the send Cancelled when spec.cancel asks; what its turns started is cancelled too.
func (r *SessionSendReconciler) cancel(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SessionSend]) (bool, error) {
	if !r.AbortForCancel(f, f.Obj.Spec.Cancel && f.Obj.Status.Phase != sessionsv1alpha1.SendCancelled) {
		return true, nil
	}
	if err := ownerflow.CancelStarted(ctx, r.Client, f.Obj, ""); err != nil {
		return false, err
	}
	st := &f.Obj.Status
	if st.Status == "" || st.Status == sessionsv1alpha1.SendAccepted {
		st.Status = sessionsv1alpha1.SendError
	}
	if st.Error == "" {
		st.Error = "cancelled by spec.cancel"
	}
	if st.RunID == "" {
		// A timed send writes nothing while round 1 runs (ok arrives with the reply), so a
		// send cancelled then had no runId: whoever knew its run by that id (an A2A task,
		// an MCP task) could not find it. The run id is the one round 1 has or would have.
		st.RunID = turns.TurnID(f.Obj.UID, "round-1")
	}
	r.end(f, ownerflow.Cancelled, sessionsv1alpha1.SendCancelled, "Cancelled", "cancelled by spec.cancel; its running turns were aborted")
	return true, nil
}

// finished hands a send that just finished to the TTL schedule and to the store's feed.
func (r *SessionSendReconciler) finished(s *sessionsv1alpha1.SessionSend) {
	if r.FinishedTTL != nil {
		r.FinishedTTL.schedule(s)
	}
	if r.Feed != nil {
		r.Feed.finishedNow(s)
	}
}

// AfterFinish deletes the finished send once its TTL has passed (a cache that keeps finished
// sends: without the manager's field selector).
func (r *SessionSendReconciler) AfterFinish(ctx context.Context, s *sessionsv1alpha1.SessionSend) (ctrl.Result, error) {
	return ownerflow.DeleteAfterTTL(ctx, r.Client, r.Clock, s, s.Spec.TTLSecondsAfterFinished, r.TTL, s.Status.CompletedAt, nil)
}

// sendFinished reads what the cache keeps of a finished send (cacheindex trims the rest,
// conditions included): it has completedAt.
func sendFinished(s *sessionsv1alpha1.SessionSend) bool { return s.Status.Finished() }

// resolveTarget finds the target session: a key, a sessionId, or the alias main. A main
// session that does not exist yet is created for an existing Agent.
func (r *SessionSendReconciler) resolveTarget(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SessionSend]) (bool, error) {
	send := f.Obj
	if sendFinished(send) {
		return false, nil
	}
	ref := send.TargetRef()
	facts, err := r.Lookup.GatherSend(ctx, send.Namespace, send.Spec.FromSessionKey, ref)
	if err != nil {
		return false, err
	}
	s := facts.Target
	switch {
	case facts.MainWithoutRequester:
		r.fail(f, lookup.ErrMainWithoutRequester.Error())
		return false, nil
	case s == nil:
		r.fail(f, fmt.Sprintf("target session %q not found in namespace %s", ref, send.Namespace))
		return false, nil
	case facts.Implied:
		// An Agent's main session is created on the first send to it (policy.ImpliedSession).
		if err := r.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, err
		}
		f.RequeueAfter(ownerflow.NotReadyRequeue)
		return false, nil
	}
	if s.Status.Phase == sessionsv1alpha1.SessionArchived {
		r.fail(f, fmt.Sprintf("target session %q is archived", s.Spec.Key))
		return false, nil
	}
	if s.Status.SessionID == "" {
		f.RequeueAfter(ownerflow.NotReadyRequeue)
		return false, nil
	}
	f.Session = s
	return true, nil
}

// roundOne runs the primary run in the target and reports its outcome as sessions_send
// does: accepted at once for fire-and-forget, ok with the reply in time, timeout at the
// deadline (the run goes on), error when it failed.
func (r *SessionSendReconciler) roundOne(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SessionSend]) (bool, error) {
	send, target, st := f.Obj, f.Session, &f.Obj.Status
	if len(st.Turns) > 0 {
		return true, nil
	}
	starter, err := r.starter(ctx, send)
	if err != nil {
		return false, err
	}
	res, ok, err := r.RunTurn(ctx, f, "round-1", func() turns.TurnRequest { return roundOneRequest(send, target, starter) })
	if !ok || err != nil {
		r.waitingForRoundOne(f)
		return false, err
	}
	send.SetTargetKey(target.Spec.Key)
	st.RunID = turns.TurnID(send.UID, "round-1")
	st.Usage = usage.Add(st.Usage, res.Usage())
	turn := sessionsv1alpha1.SendTurn{Round: 1, Session: target.Spec.Key}
	turn.Reply, turn.ReplySeq = ownerflow.StatusText(res.Text, res.ReplySeq)
	if res.Err != nil {
		turn.Error = textutil.Truncate(res.Err.Error(), ownerflow.MaxErrorText)
		st.Turns = append(st.Turns, turn)
		if errors.Is(res.Err, budget.ErrExceeded) {
			return false, r.stopForBudget(ctx, f, res.Err.Error())
		}
		r.failWith(f, "RunFailed", "the run failed: "+turn.Error)
		return false, nil
	}
	turn.Skipped = endsPingPong(res.Text)
	st.Turns = append(st.Turns, turn)
	if st.StartedAt == nil {
		st.StartedAt = ptrTime(send.CreationTimestamp)
	}
	// A round 1 of exactly REPLY_SKIP chose not to reply: the send's reply is "" (ok with
	// noReply to sessions_send); status.turns keeps what the target said.
	st.Reply, st.ReplyTruncated = turn.Reply, turn.ReplySeq != 0
	if protocol.NoReply(turn.Reply) {
		st.Reply = ""
	}
	if st.Status == "" {
		st.Status = repliedStatus(send)
	}
	// No message: the reason says it, and every finished send keeps its conditions.
	setReplied(send, metav1.ConditionTrue, "Replied", "")
	return true, nil
}

// waitingForRoundOne reports accepted or timeout while round 1 runs, and when to look again.
// While a timed send waits, nothing is written: ok arrives with the reply.
func (r *SessionSendReconciler) waitingForRoundOne(f *ownerflow.Flow[*sessionsv1alpha1.SessionSend]) {
	send, st := f.Obj, &f.Obj.Status
	if st.Status != "" {
		return
	}
	if timeout := timeoutOf(send); timeout > 0 {
		if left := send.CreationTimestamp.Add(timeout).Sub(r.Clock.Now()); left > 0 {
			f.RequeueAfter(left)
			return
		}
		st.Status = sessionsv1alpha1.SendTimeout
		st.Error = fmt.Sprintf("no reply within %s; the run goes on: its reply will be recorded in status.turns and the transcript", timeout)
		setReplied(send, metav1.ConditionFalse, "Timeout", st.Error)
		f.Event(corev1.EventTypeWarning, "Timeout", "%s", st.Error)
	} else {
		st.Status = sessionsv1alpha1.SendAccepted
		f.Event(corev1.EventTypeNormal, "Accepted", "fire-and-forget send accepted")
	}
	st.Phase, st.StartedAt = sessionsv1alpha1.SendRunning, ptrTime(send.CreationTimestamp)
	send.SetTargetKey(f.Session.Spec.Key)
	st.RunID = turns.TurnID(send.UID, "round-1")
}

// roundOneRequest is round 1's turn: the message with its provenance (starter's, the cron
// or hook provenance of a schedule's or hook's send, when not nil).
func roundOneRequest(send *sessionsv1alpha1.SessionSend, target *sessionsv1alpha1.AgentSession, starter *transcript.Provenance) turns.TurnRequest {
	prov := &transcript.Provenance{Kind: transcript.ProvenanceExternal, SourceTool: "sessions_send"}
	var system string
	switch from := send.Spec.FromSessionKey; {
	case from != "":
		prov.Kind, prov.SourceSessionKey = transcript.ProvenanceInterSession, from
		system = protocol.RoundOne(from)
	case starter != nil:
		prov = starter
	}
	return turns.TurnRequest{SessionKey: target.Spec.Key, Input: ownerflow.TextMessage(send.Spec.Message, prov), SystemContext: system}
}

// announce runs the announce step in the target and delivers what it says. The step is
// agent-to-agent, as in the seeds: a person's send (no fromSessionKey) has none, and ends
// with its round 1 in one status write.
func (r *SessionSendReconciler) announce(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SessionSend]) (bool, error) {
	send, st := f.Obj, &f.Obj.Status
	if (st.Announce != nil && st.Announce.Status != sessionsv1alpha1.AnnounceDelivering) || send.Spec.FromSessionKey == "" {
		return true, nil
	}
	round1, err := r.WholeText(ctx, send.Namespace, st.Turns[0].Session, st.Turns[0].Reply, st.Turns[0].ReplySeq)
	if err != nil {
		return false, err
	}
	last := latestReply(st.Turns)
	latest, err := r.WholeText(ctx, send.Namespace, last.Session, last.Reply, last.ReplySeq)
	if err != nil {
		return false, err
	}
	res, ok, err := r.RunTurn(ctx, f, "announce", func() turns.TurnRequest {
		return turns.TurnRequest{SessionKey: f.Session.Spec.Key,
			Input: ownerflow.TextMessage(announce.AgentAnnounceInput(send.Spec.Message, round1, latest),
				&transcript.Provenance{Kind: transcript.ProvenanceInterSession, SourceSessionKey: send.Spec.FromSessionKey, SourceTool: "sessions_send"}),
			SystemContext: protocol.AgentAnnounce(send.Spec.FromSessionKey)}
	})
	if !ok || err != nil {
		st.Phase = sessionsv1alpha1.SendAnnouncing
		return false, err
	}
	if st.Announce == nil {
		st.Usage = usage.Add(st.Usage, res.Usage())
	}
	var wait time.Duration
	st.Announce, wait = r.Announcer.Outcome(ctx, announce.Input{Session: f.Session, Key: turns.TurnID(send.UID, "announce"), Prev: st.Announce}, res)
	if st.Announce.Status == sessionsv1alpha1.AnnounceDelivering {
		st.Phase = sessionsv1alpha1.SendAnnouncing
		f.RequeueAfter(max(wait, ownerflow.NotReadyRequeue))
		return false, nil
	}
	announce.Event(f, st.Announce)
	return true, nil
}

// complete ends a send whose steps all ran.
func (r *SessionSendReconciler) complete(_ context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SessionSend]) (bool, error) {
	// No message: every finished send keeps its conditions, and the reason says Completed (a
	// person's send has no reply-back or announce, as status.announce being unset shows).
	// No Event: the Completed condition and agent_sessions_finished_total say it, and an
	// Event on every success is an API write per send (a third of a person's send's writes).
	r.end(f, ownerflow.Succeeded, sessionsv1alpha1.SendCompleted, "Completed", "")
	return true, nil
}

func (r *SessionSendReconciler) fail(f *ownerflow.Flow[*sessionsv1alpha1.SessionSend], msg string) {
	r.failWith(f, "Failed", msg)
}

// failWith ends the send with status error, and an Event of reason.
func (r *SessionSendReconciler) failWith(f *ownerflow.Flow[*sessionsv1alpha1.SessionSend], reason, msg string) {
	st := &f.Obj.Status
	st.Status, st.Error = sessionsv1alpha1.SendError, textutil.Truncate(msg, ownerflow.MaxStatusText)
	setReplied(f.Obj, metav1.ConditionFalse, "Error", msg)
	f.Event(corev1.EventTypeWarning, reason, "%s", msg)
	r.end(f, ownerflow.Failed, sessionsv1alpha1.SendFailed, "Failed", msg)
}

func (r *SessionSendReconciler) end(f *ownerflow.Flow[*sessionsv1alpha1.SessionSend], o ownerflow.Outcome, phase sessionsv1alpha1.SendPhase, reason, msg string) {
	st := &f.Obj.Status
	st.Phase = phase
	now := metav1.NewTime(r.Clock.Now())
	st.CompletedAt = &now
	ownerflow.SetOutcome(&st.Conditions, o, reason, msg)
	f.Log.V(2).Info("send finished", "phase", phase, "reason", reason)
}

func setReplied(send *sessionsv1alpha1.SessionSend, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&send.Status.Conditions, metav1.Condition{Type: sessionsv1alpha1.ConditionReplied, Status: status,
		Reason: reason, Message: textutil.Truncate(msg, ownerflow.MaxConditionMessage)})
}

// SetupWith wires the step runner and registers the reconciler, woken by the engine when its turns end.
func (r *SessionSendReconciler) SetupWith(b *builder.Builder, concurrency int) error {
	r.wire()
	return b.
		For(&sessionsv1alpha1.SessionSend{}).
		Owns(&sessionsv1alpha1.ToolApproval{}).
		WatchesRawSource(source.Channel(r.Runner.Wake(turns.OwnerSessionSend), &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("sessionsend").Complete(ownerflow.RequeueConflicts(r))
}

// repliedStatus is the status of a send whose round 1 replied before any status was
// recorded: ok for a timed send, and accepted for a fire-and-forget one, which is what it
// reports whenever its accepted write did not land first (the API server was away).
func repliedStatus(send *sessionsv1alpha1.SessionSend) sessionsv1alpha1.SendStatus {
	if timeoutOf(send) == 0 {
		return sessionsv1alpha1.SendAccepted
	}
	return sessionsv1alpha1.SendOK
}

func timeoutOf(send *sessionsv1alpha1.SessionSend) time.Duration {
	if send.Spec.TimeoutSeconds == nil {
		return sessionsv1alpha1.DefaultSendTimeoutSeconds * time.Second
	}
	return time.Duration(*send.Spec.TimeoutSeconds) * time.Second
}

// endsPingPong: an exact REPLY_SKIP or an empty reply stops the reply-back loop.
func endsPingPong(reply string) bool {
	return strings.TrimSpace(reply) == "" || announce.IsSkip(reply, sessionsv1alpha1.ReplySkip)
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }
