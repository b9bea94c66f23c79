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
	"fmt"
	"strings"
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
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/indexer"
	"github.com/agent-sessions/agent-session-operator/internal/runtime"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// notReadyRequeue is how soon a step waiting for a session's transcript looks again.
const notReadyRequeue = 250 * time.Millisecond

// SessionSendReconciler runs sessions_send as an object: round 1 in the target, the
// reply-back ping-pong with the requester, the announce step in the target. Every turn has
// an id derived from the send's UID and step, so a restarted manager submits the same turns
// again and the engine's idempotent appends make each happen once. Status is written when an
// outcome a person waits for is known (accepted, timeout, ok or error, each ping-pong turn,
// completion): a send without reply-back costs three API writes with its create.
type SessionSendReconciler struct {
	client.Client
	Runner   runtime.Runner
	Clock    clock.Clock
	Recorder recorder.EventRecorder
	// APIReader confirms a cache miss of an Agent before a send to its main session fails.
	APIReader client.Reader
	announcer *announcer
	stale     staleReads
}

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionsends,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionsends/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=agents,verbs=get;list;watch

func (r *SessionSendReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	send := &v1.SessionSend{}
	if err := r.Get(ctx, req.NamespacedName, send); err != nil {
		if apierrors.IsNotFound(err) {
			r.stale.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if send.Status.Phase == v1.SendCompleted || send.Status.Phase == v1.SendFailed {
		r.forget(send)
		return ctrl.Result{}, nil
	}
	if r.stale.stale(send) {
		return ctrl.Result{}, nil
	}
	old := send.Status.DeepCopy()
	res, err := r.reconcile(ctx, send)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !equality.Semantic.DeepEqual(old, &send.Status) {
		send.Status.ObservedGeneration = send.Generation
		replaced := send.ResourceVersion
		if err := r.Status().Update(ctx, send); err != nil {
			// A stale cache read: the next reconcile sees the newer object.
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: notReadyRequeue}, nil
			}
			return ctrl.Result{}, err
		}
		// A finished send is forgotten when the cache shows it finished: until then the stale
		// mark keeps a reconcile queued meanwhile from redoing the announce from the old read.
		r.stale.wrote(send, replaced)
	}
	return res, nil
}

// reconcile advances the send as far as finished turns allow. It returns with a turn
// submitted (the engine wakes the send when it ends) or with the send complete.
func (r *SessionSendReconciler) reconcile(ctx context.Context, send *v1.SessionSend) (ctrl.Result, error) {
	target, res, err := r.resolveTarget(ctx, send)
	if target == nil || err != nil {
		return res, err
	}
	st := &send.Status
	if len(st.Turns) == 0 {
		done, res, err := r.roundOne(ctx, send, target)
		if !done || err != nil {
			return res, err
		}
		if st.Phase == v1.SendFailed {
			return ctrl.Result{}, nil
		}
	}
	if done, err := r.replyBack(ctx, send, target); !done || err != nil {
		return ctrl.Result{}, err
	}
	if st.Announce == nil {
		done, err := r.announce(ctx, send, target)
		if !done || err != nil {
			return ctrl.Result{}, err
		}
	}
	r.complete(send, v1.SendCompleted, "Completed", "the send, its reply-back and its announce are done")
	return ctrl.Result{}, nil
}

// resolveTarget finds the target session: a key, a sessionId, or the alias main. A main
// session that does not exist yet is created for an existing Agent.
func (r *SessionSendReconciler) resolveTarget(ctx context.Context, send *v1.SessionSend) (*v1.AgentSession, ctrl.Result, error) {
	ref := send.Spec.SessionKey
	if send.Status.TargetSessionKey != "" {
		ref = send.Status.TargetSessionKey
	}
	agentID, err := r.requesterAgent(ctx, send)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if (ref == sessionkey.Main || ref == sessionkey.Global) && agentID == "" {
		r.fail(send, "sessionKey main names the requester's main session, and this send has no fromSessionKey; name the target's full key, e.g. agent:<agentId>:main")
		return nil, ctrl.Result{}, nil
	}
	key := sessionkey.Resolve(ref, agentID)
	s, err := indexer.SessionByKey(ctx, r.Client, send.Namespace, key)
	if err == nil && s == nil {
		s, err = indexer.SessionByID(ctx, r.Client, send.Namespace, ref)
	}
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if s == nil {
		created, err := r.createMainSession(ctx, send.Namespace, key)
		if err != nil || !created {
			if err == nil {
				r.fail(send, fmt.Sprintf("target session %q not found in namespace %s", ref, send.Namespace))
			}
			return nil, ctrl.Result{}, err
		}
		return nil, ctrl.Result{RequeueAfter: notReadyRequeue}, nil
	}
	if s.Status.Phase == v1.SessionArchived {
		r.fail(send, fmt.Sprintf("target session %q is archived", s.Spec.Key))
		return nil, ctrl.Result{}, nil
	}
	if s.Status.SessionID == "" {
		return nil, ctrl.Result{RequeueAfter: notReadyRequeue}, nil
	}
	return s, ctrl.Result{}, nil
}

// requesterAgent is the agent of fromSessionKey's session, which "main" resolves against.
func (r *SessionSendReconciler) requesterAgent(ctx context.Context, send *v1.SessionSend) (string, error) {
	from := send.Spec.FromSessionKey
	if from == "" {
		return "", nil
	}
	s, err := indexer.SessionByKey(ctx, r.Client, send.Namespace, from)
	if err != nil || s == nil {
		return sessionkey.AgentOf(from), err
	}
	return s.Spec.AgentID, nil
}

// createMainSession creates agent:<id>:main when key is one and its Agent exists.
func (r *SessionSendReconciler) createMainSession(ctx context.Context, namespace, key string) (bool, error) {
	k, err := sessionkey.Parse(key)
	if err != nil || k.Kind != sessionkey.KindMain || k.AgentID == "" || key != sessionkey.MainKey(k.AgentID) {
		return false, nil
	}
	if agent, err := indexer.Agent(ctx, r.Client, r.APIReader, namespace, k.AgentID); agent == nil || err != nil {
		return false, err
	}
	s := &v1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: namespace},
		Spec:       v1.AgentSessionSpec{Key: key, AgentID: k.AgentID, ChatType: v1.ChatTypeDirect},
	}
	if err := r.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, err
	}
	return true, nil
}

// roundOne runs the primary run in the target and reports its outcome as sessions_send
// does: accepted at once for fire-and-forget, ok with the reply in time, timeout at the
// deadline (the run goes on), error when it failed.
func (r *SessionSendReconciler) roundOne(ctx context.Context, send *v1.SessionSend, target *v1.AgentSession) (bool, ctrl.Result, error) {
	st := &send.Status
	id := turnID(send, "round-1")
	res, ok := r.Runner.Result(id)
	if !ok {
		if err := r.Runner.Submit(ctx, r.roundOneRequest(send, target)); err != nil {
			return false, ctrl.Result{}, err
		}
		return false, r.waitingForRoundOne(send, target), nil
	}
	st.TargetSessionKey, st.RunID = target.Spec.Key, id
	turn := v1.SendTurn{Round: 1, Session: target.Spec.Key, Reply: res.Text}
	if res.Err != nil {
		turn.Error = truncate(res.Err.Error(), 1024)
		st.Turns = append(st.Turns, turn)
		st.Status, st.Error = v1.SendError, "the run failed: "+turn.Error
		r.setReplied(send, metav1.ConditionFalse, "Error", st.Error)
		r.event(send, corev1.EventTypeWarning, "RunFailed", st.Error)
		r.complete(send, v1.SendFailed, "Failed", st.Error)
		return true, ctrl.Result{}, nil
	}
	turn.Skipped = endsPingPong(res.Text)
	st.Turns = append(st.Turns, turn)
	if st.StartedAt == nil {
		st.StartedAt = ptrTime(send.CreationTimestamp)
	}
	st.Reply = res.Text
	if st.Status == "" {
		st.Status = repliedStatus(send)
	}
	r.setReplied(send, metav1.ConditionTrue, "Replied", "round 1 replied")
	return true, ctrl.Result{}, nil
}

// waitingForRoundOne reports accepted or timeout while round 1 runs, and when to look again.
// While a timed send waits, nothing is written: ok arrives with the reply.
func (r *SessionSendReconciler) waitingForRoundOne(send *v1.SessionSend, target *v1.AgentSession) ctrl.Result {
	st := &send.Status
	if st.Status != "" {
		return ctrl.Result{}
	}
	if timeout := timeoutOf(send); timeout > 0 {
		if left := send.CreationTimestamp.Add(timeout).Sub(r.Clock.Now()); left > 0 {
			return ctrl.Result{RequeueAfter: left}
		}
		st.Status = v1.SendTimeout
		st.Error = fmt.Sprintf("no reply within %s; the run goes on: its reply will be recorded in status.turns and the transcript", timeout)
		r.setReplied(send, metav1.ConditionFalse, "Timeout", st.Error)
		r.event(send, corev1.EventTypeWarning, "Timeout", "%s", st.Error)
	} else {
		st.Status = v1.SendAccepted
		r.event(send, corev1.EventTypeNormal, "Accepted", "fire-and-forget send accepted")
	}
	st.Phase, st.StartedAt = v1.SendRunning, ptrTime(send.CreationTimestamp)
	st.TargetSessionKey, st.RunID = target.Spec.Key, turnID(send, "round-1")
	return ctrl.Result{}
}

func (r *SessionSendReconciler) roundOneRequest(send *v1.SessionSend, target *v1.AgentSession) runtime.TurnRequest {
	prov := &transcript.Provenance{Kind: transcript.ProvenanceExternal, SourceTool: "sessions_send"}
	var system string
	if from := send.Spec.FromSessionKey; from != "" {
		prov.Kind, prov.SourceSessionKey = transcript.ProvenanceInterSession, from
		system = fmt.Sprintf("Agent-to-agent message: the next user message was sent by session %s with sessions_send, "+
			"not typed by this session's user. Your reply is returned to that session.", from)
	}
	return runtime.TurnRequest{
		ID: turnID(send, "round-1"), Namespace: send.Namespace, SessionKey: target.Spec.Key,
		Input:         textMessage(send.Spec.Message, prov),
		SystemContext: system,
		Owner:         runtime.Owner{Kind: runtime.OwnerSessionSend, NamespacedName: client.ObjectKeyFromObject(send)},
	}
}

// announce runs the announce step in the target and delivers what it says.
func (r *SessionSendReconciler) announce(ctx context.Context, send *v1.SessionSend, target *v1.AgentSession) (bool, error) {
	st := &send.Status
	id := turnID(send, "announce")
	res, ok := r.Runner.Result(id)
	if !ok {
		st.Phase = v1.SendAnnouncing
		latest := st.Turns[len(st.Turns)-1].Reply
		return false, r.Runner.Submit(ctx, runtime.TurnRequest{
			ID: id, Namespace: send.Namespace, SessionKey: target.Spec.Key,
			Input: textMessage(AgentAnnounceInput(send.Spec.Message, st.Turns[0].Reply, latest),
				&transcript.Provenance{Kind: transcript.ProvenanceInterSession, SourceSessionKey: send.Spec.FromSessionKey, SourceTool: "sessions_send"}),
			Owner: runtime.Owner{Kind: runtime.OwnerSessionSend, NamespacedName: client.ObjectKeyFromObject(send)},
		})
	}
	if res.Err != nil {
		st.Announce = &v1.Announce{Status: v1.AnnounceFailed, Reason: "the announce turn failed: " + truncate(res.Err.Error(), 512)}
	} else {
		st.Announce = r.announcer.announce(ctx, target, res.Text, turnID(send, "announce"))
	}
	if typ, ok := announceEventType(st.Announce); ok {
		r.event(send, typ, "Announce", "announce %s: %s", st.Announce.Status, st.Announce.Reason)
	}
	return true, nil
}

func (r *SessionSendReconciler) complete(send *v1.SessionSend, phase v1.SendPhase, reason, msg string) {
	st := &send.Status
	st.Phase = phase
	now := metav1.NewTime(r.Clock.Now())
	st.CompletedAt = &now
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1.ConditionCompleted, Status: metav1.ConditionTrue,
		Reason: reason, Message: truncate(msg, 512), ObservedGeneration: send.Generation})
	if phase == v1.SendCompleted {
		r.event(send, corev1.EventTypeNormal, "Completed", "%s", msg)
	}
}

func (r *SessionSendReconciler) fail(send *v1.SessionSend, msg string) {
	send.Status.Status, send.Status.Error = v1.SendError, msg
	r.setReplied(send, metav1.ConditionFalse, "Error", msg)
	r.event(send, corev1.EventTypeWarning, "Failed", "%s", msg)
	r.complete(send, v1.SendFailed, "Failed", msg)
}

func (r *SessionSendReconciler) setReplied(send *v1.SessionSend, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&send.Status.Conditions, metav1.Condition{Type: v1.ConditionReplied, Status: status,
		Reason: reason, Message: truncate(msg, 512), ObservedGeneration: send.Generation})
}

func (r *SessionSendReconciler) event(send *v1.SessionSend, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(send, nil, typ, reason, reason, format, args...)
	}
}

// forget drops the send's turn results and stale-read mark. Every possible round is
// forgotten: a finished send in the cache no longer lists its turns.
func (r *SessionSendReconciler) forget(send *v1.SessionSend) {
	r.Runner.Forget(turnID(send, "announce"))
	for i := range 1 + DefaultMaxPingPongTurns {
		r.Runner.Forget(turnID(send, fmt.Sprintf("round-%d", i+1)))
	}
	r.stale.forget(client.ObjectKeyFromObject(send))
}

// SetupWithManager registers the reconciler, woken by the engine when its turns end.
func (r *SessionSendReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.SessionSend{}).
		WatchesRawSource(source.Channel(r.Runner.Wake(runtime.OwnerSessionSend), &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("sessionsend").Complete(r)
}

// turnID names a turn of an owner: its UID and the step.
func turnID(o client.Object, step string) string { return string(o.GetUID()) + "/" + step }

// repliedStatus is the status of a send whose round 1 replied before any status was
// recorded: ok for a timed send, and accepted for a fire-and-forget one, which is what it
// reports whenever its accepted write did not land first (the API server was away).
func repliedStatus(send *v1.SessionSend) v1.SendStatus {
	if timeoutOf(send) == 0 {
		return v1.SendAccepted
	}
	return v1.SendOK
}

func timeoutOf(send *v1.SessionSend) time.Duration {
	if send.Spec.TimeoutSeconds == nil {
		return 30 * time.Second
	}
	return time.Duration(*send.Spec.TimeoutSeconds) * time.Second
}

// endsPingPong: an exact REPLY_SKIP or an empty reply stops the reply-back loop.
func endsPingPong(reply string) bool {
	return strings.TrimSpace(reply) == "" || IsSkip(reply, v1.ReplySkip)
}

func textMessage(text string, prov *transcript.Provenance) transcript.Message {
	return transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}, Provenance: prov}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

// announceEventType says whether an announce deserves an Event, and of which type. A skip
// (ANNOUNCE_SKIP, empty, no sink) is the common case and stays in status only: each Event
// is an API write.
func announceEventType(a *v1.Announce) (string, bool) {
	switch {
	case a.Status == v1.AnnounceDelivered:
		return corev1.EventTypeNormal, true
	case a.Status == v1.AnnounceFailed, strings.HasPrefix(a.Reason, blockedAtDelivery):
		return corev1.EventTypeWarning, true
	}
	return "", false
}
