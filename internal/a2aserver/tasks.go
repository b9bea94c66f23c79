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

package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// agentHandler answers the A2A methods for one request of an admitted caller to one agent.
type agentHandler struct {
	call  *sessiontools.Call
	agent *sessionsv1alpha1.Agent
	hub   *events.Hub
	// user is the caller as the API server authenticated it; its tasks are its own.
	user string
}

var _ a2asrv.RequestHandler = (*agentHandler)(nil)

// sendTimeoutSeconds is the sends' timeoutSeconds: the longest a send waits, so its status
// arrives with the reply in one write. A task that outlives it keeps working: the run goes on.
const sendTimeoutSeconds = sessiontools.MaxSendTimeoutSeconds

// start creates the send of a message: into the context's session, as the caller. Its name
// comes from the caller and the message id, so a client that repeats a message gets its
// task again rather than a second send.
func (h *agentHandler) start(ctx context.Context, p *a2a.SendMessageRequest) (*sessionsv1alpha1.SessionSend, string, error) {
	if p == nil || p.Message == nil {
		return nil, "", fmt.Errorf("%w: message is required", a2a.ErrInvalidParams)
	}
	if p.Message.TaskID != "" {
		return nil, "", fmt.Errorf("%w: a task takes no further messages here; send without taskId in the same contextId", a2a.ErrUnsupportedOperation)
	}
	text := messageText(p.Message)
	if text == "" {
		return nil, "", fmt.Errorf("%w: the message has no text part", a2a.ErrUnsupportedContentType)
	}
	key, contextID, err := h.contextSession(ctx, p.Message.ContextID)
	if err != nil {
		return nil, "", err
	}
	call := *h.call
	if p.Message.ID != "" {
		// The call's ID is a2a/<namespace>/<user>/<random>: the message id takes the random's place.
		call.ID = h.call.ID[:strings.LastIndexByte(h.call.ID, '/')] + "/message/" + p.Message.ID
	}
	annotations := map[string]string{AnnotationContext: contextID, sessionsv1alpha1.DoorAnnotation: "a2a"}
	if c := carriedChain(ctx, p.Message); c != nil {
		annotations[sessionsv1alpha1.CarriedChainAnnotation] = c.Encode()
	}
	call.Stamp = func(_ context.Context, obj client.Object) error {
		obj.SetLabels(map[string]string{LabelAgent: h.agent.Name, LabelCaller: CallerLabel(h.user)})
		obj.SetAnnotations(annotations)
		return nil
	}
	send, denied, err := call.StartSend(ctx, key, text, sendTimeoutSeconds)
	if err == nil && denied != nil {
		err = fmt.Errorf("%w: %s", a2a.ErrInvalidRequest, denied.Error)
	}
	return send, contextID, err
}

// startFollowed is start with the hub subscribed before the send is created, so the created
// send is the first state to follow and no change after it is missed.
func (h *agentHandler) startFollowed(ctx context.Context, p *a2a.SendMessageRequest) (*sessionsv1alpha1.SessionSend, *events.Subscription, error) {
	sub := h.hub.Subscribe("")
	send, _, err := h.start(ctx, p)
	if err != nil {
		sub.Close()
		return nil, nil, err
	}
	return send, sub, nil
}

// messageText is the message's text parts, one after the other.
func messageText(m *a2a.Message) string {
	var parts []string
	for _, p := range m.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			parts = append(parts, string(t))
		}
	}
	return strings.Join(parts, "\n")
}

// taskID is the task id of a send: its runId.
func taskID(send *sessionsv1alpha1.SessionSend) a2a.TaskID {
	return a2a.TaskID(sessiontools.TurnID(send.UID, "round-1"))
}

// taskOf is the task of a send, in the context it was sent in.
func taskOf(send *sessionsv1alpha1.SessionSend) *a2a.Task {
	return Task(send, taskID(send), contextOf(send))
}

// wholeTask is the task of a send with its whole reply (sessiontools.WithWholeReply): the
// artifact is never status's 8 KiB preview.
func (h *agentHandler) wholeTask(ctx context.Context, send *sessionsv1alpha1.SessionSend) (*a2a.Task, error) {
	whole, err := h.call.WithWholeReply(ctx, send)
	if err != nil {
		return nil, protocolError(err)
	}
	return taskOf(whole), nil
}

// contextOf is the context id a send was made in.
func contextOf(send *sessionsv1alpha1.SessionSend) string {
	if c := send.Annotations[AnnotationContext]; c != "" {
		return c
	}
	return send.Spec.SessionKey
}

// SendMessage sends, then waits for the task to end unless the client asked to return at
// once (returnImmediately; 0.3's blocking: false).
func (h *agentHandler) SendMessage(ctx context.Context, p *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	send, sub, err := h.startFollowed(ctx, p)
	if err != nil {
		return nil, protocolError(err)
	}
	if p.Config != nil && p.Config.ReturnImmediately {
		sub.Close()
		return taskOf(send), nil
	}
	var last *sessionsv1alpha1.SessionSend
	err = h.follow(ctx, send, sub, func(s *sessionsv1alpha1.SessionSend) bool { last = s; return true })
	if err != nil {
		return nil, protocolError(err)
	}
	return h.wholeTask(ctx, last)
}

// SendStreamingMessage sends, then streams the task: the task, each change of its state,
// the reply as it is written (artifact updates), and the whole reply before the final state.
func (h *agentHandler) SendStreamingMessage(ctx context.Context, p *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		send, sub, err := h.startFollowed(ctx, p)
		if err != nil {
			yield(nil, protocolError(err))
			return
		}
		h.stream(ctx, send, sub, yield)
	}
}

// SubscribeToTask streams a task the caller may read, from its state now.
func (h *agentHandler) SubscribeToTask(ctx context.Context, p *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if p == nil {
			yield(nil, a2a.ErrInvalidParams)
			return
		}
		send, err := h.find(ctx, p.ID)
		if err != nil {
			yield(nil, protocolError(err))
			return
		}
		h.stream(ctx, send, nil, yield)
	}
}

// stream yields the task, then each change of its state until it ends (sub as follow takes it).
func (h *agentHandler) stream(ctx context.Context, send *sessionsv1alpha1.SessionSend, sub *events.Subscription, yield func(a2a.Event, error) bool) {
	var last a2a.TaskState
	first := true
	reply := liveReply{}
	err := h.followLive(ctx, send, sub, func(s *sessionsv1alpha1.SessionSend) bool {
		reply.send = s
		t, err := h.wholeTask(ctx, s)
		if err != nil {
			return yield(nil, err)
		}
		if first {
			first, last = false, t.Status.State
			return yield(t, nil)
		}
		if t.Status.State == last {
			return true
		}
		last = t.Status.State
		if t.Status.State == a2a.TaskStateCompleted {
			art := &a2a.TaskArtifactUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Artifact: t.Artifacts[0], LastChunk: true}
			if !yield(art, nil) {
				return false
			}
		}
		return yield(&a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status}, nil)
	}, func(d events.SessionDelta) bool {
		if art := reply.update(d); art != nil {
			return yield(art, nil)
		}
		return true
	})
	if err != nil {
		yield(nil, protocolError(err))
	}
}

// GetTask is a task the caller may read.
func (h *agentHandler) GetTask(ctx context.Context, q *a2a.GetTaskRequest) (*a2a.Task, error) {
	if q == nil {
		return nil, a2a.ErrInvalidParams
	}
	send, err := h.find(ctx, q.ID)
	if err != nil {
		return nil, protocolError(err)
	}
	return h.wholeTask(ctx, send)
}

// CancelTask sets spec.cancel on the task's send as the caller, then waits for the send
// to end (cancelled, or finished first).
func (h *agentHandler) CancelTask(ctx context.Context, p *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if p == nil {
		return nil, a2a.ErrInvalidParams
	}
	send, err := h.find(ctx, p.ID)
	if err != nil {
		return nil, protocolError(err)
	}
	if terminal(TaskState(&send.Status)) {
		return nil, fmt.Errorf("%w: the task is %s", a2a.ErrTaskNotCancelable, TaskState(&send.Status))
	}
	if err := h.call.Access(ctx, caller.CancelSend, send.Name); err != nil {
		return nil, refused(err)
	}
	if err := sessiontools.Cancel(ctx, h.call.Client, send); err != nil {
		return nil, protocolError(refused(err))
	}
	// The controller ends the send at once; a manager that is down leaves it working.
	wait, stop := context.WithTimeout(ctx, cancelWait)
	defer stop()
	last := send
	err = h.follow(wait, send, nil, func(s *sessionsv1alpha1.SessionSend) bool { last = s; return true })
	if err != nil && wait.Err() == nil {
		return nil, protocolError(err)
	}
	return h.wholeTask(ctx, last)
}

// cancelWait bounds how long tasks/cancel waits for the send to end; a task still working
// then is answered as it is, and tasks/get tells when it has ended.
const cancelWait = 5 * time.Second

// find is the send of a task id, when the caller may read it: one of the sends the A2A
// server made for this agent, into a session whose transcript the caller may read. Any
// other id, another tenant's task among them, is not found.
func (h *agentHandler) find(ctx context.Context, id a2a.TaskID) (*sessionsv1alpha1.SessionSend, error) {
	uid := sessiontools.OwnerUIDOf(string(id))
	if uid == "" || string(id) != sessiontools.TurnID(uid, "round-1") {
		return nil, a2a.ErrTaskNotFound
	}
	var list sessionsv1alpha1.SessionSendList
	// A task is its caller's: another caller's is not found, as an unknown id is.
	err := h.call.Client.List(ctx, &list, client.InNamespace(h.call.Namespace),
		client.MatchingLabels{LabelAgent: h.agent.Name, LabelCaller: CallerLabel(h.user)})
	if apierrors.IsForbidden(err) {
		return nil, a2a.ErrTaskNotFound
	}
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		s := &list.Items[i]
		if s.UID != uid {
			continue
		}
		if err := h.call.Access(ctx, caller.ReadTranscript, sessionkey.ObjectName(s.TargetRef())); err != nil {
			if apierrors.IsForbidden(err) {
				return nil, a2a.ErrTaskNotFound
			}
			return nil, err
		}
		return s, nil
	}
	return nil, a2a.ErrTaskNotFound
}

// Push notifications are not offered (the card says so).
func (h *agentHandler) GetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *agentHandler) ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *agentHandler) CreateTaskPushConfig(context.Context, *a2a.PushConfig) (*a2a.PushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *agentHandler) DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error {
	return a2a.ErrPushNotificationNotSupported
}

// GetExtendedAgentCard: the card served to an authenticated caller is the whole card.
func (h *agentHandler) GetExtendedAgentCard(context.Context, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return nil, a2a.ErrExtendedCardNotConfigured
}

// errGone is a send deleted while it was followed.
var errGone = errors.New("the task's send was deleted")
