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

package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/tracing"
)

// sessions_send bounds: the seeds' default wait is > 0; a turn should not wait for hours.
const (
	DefaultSendTimeoutSeconds = v1.DefaultSendTimeoutSeconds
	MaxSendTimeoutSeconds     = 600
)

type sendArgs struct {
	SessionKey     string `json:"sessionKey"`
	Message        string `json:"message"`
	TimeoutSeconds number `json:"timeoutSeconds"`
}

func sendTool() *tool {
	return &tool{session: true, def: toolDef("sessions_send",
		"Send a message into another session. timeoutSeconds > 0 waits for the reply (default 30); 0 is fire-and-forget.",
		map[string]any{
			"sessionKey":     map[string]any{"type": "string", "description": "session key, sessionId, or main"},
			"message":        map[string]any{"type": "string"},
			"timeoutSeconds": map[string]any{"type": "number"},
		}, "sessionKey", "message"),
		run: func(ctx context.Context, c *toolCall) (any, error) {
			var a sendArgs
			if err := decodeArgs(c.args, &a); err != nil {
				return nil, err
			}
			if a.SessionKey == "" || a.Message == "" {
				return nil, errors.New("sessionKey and message are required")
			}
			return c.send(ctx, a.SessionKey, a.Message, int32(clamp(a.TimeoutSeconds.or(DefaultSendTimeoutSeconds), 0, MaxSendTimeoutSeconds)))
		}}
}

// objectName names an object a tool call creates: the same on every run of the turn, so a
// repeated turn finds it instead of creating a second one.
func (c *toolCall) objectName(prefix string) string {
	sum := sha256.Sum256([]byte(c.req.ID + "/" + c.callID()))
	return prefix + hex.EncodeToString(sum[:])[:20]
}

// callUUID is a UUID-shaped id derived from the call, for keys that must be known up front.
func (c *toolCall) callUUID() string {
	sum := sha256.Sum256([]byte("uuid/" + c.req.ID + "/" + c.callID()))
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// createOnce creates obj, or reads the one an earlier run of the turn created. A denial by
// admission comes back as a forbidden result, with the webhook's message.
func (c *toolCall) createOnce(ctx context.Context, obj client.Object) (*statusResult, error) {
	// The turn's owner is recorded so that cancelling it cancels what its turns started.
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1.StartedByLabel] = string(OwnerUIDOf(c.req.ID))
	obj.SetLabels(labels)
	if tracing.Enabled() {
		// Its own trace from the start (no annotation write later), linked to this call.
		a := obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[tracing.Annotation] = tracing.NewRoot()
		a[tracing.LinkAnnotation] = tracing.Format(trace.SpanContextFromContext(ctx))
		obj.SetAnnotations(a)
	}
	err := c.e.opts.Client.Create(ctx, obj)
	switch {
	case err == nil:
		return nil, nil
	case apierrors.IsAlreadyExists(err):
		return nil, c.e.opts.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return &statusResult{Status: statusForbidden, Error: err.Error()}, nil
	}
	return nil, err
}

// sendsToItself says ref names the calling session itself: by its key, its sessionId, or an
// alias ("main", "global") of its agent's main session. Such a send would wait on its own
// lane until the timeout, so the tool refuses it.
func sendsToItself(ref string, self *v1.AgentSession) bool {
	resolved := sessionkey.Resolve(ref, self.Spec.AgentID)
	return resolved == self.Spec.Key || (self.Status.SessionID != "" && ref == self.Status.SessionID)
}

func (c *toolCall) send(ctx context.Context, ref, message string, timeout int32) (any, error) {
	if sendsToItself(ref, c.session) {
		return nil, fmt.Errorf("sessions_send: %q is this session itself; answer in your reply instead of sending to yourself", ref)
	}
	hops, err := c.hopsAnnotation(ctx)
	if err != nil {
		return nil, err
	}
	s := &v1.SessionSend{
		ObjectMeta: metav1.ObjectMeta{Name: c.objectName("send-"), Namespace: c.req.Namespace, Annotations: hops},
		Spec: v1.SessionSendSpec{SessionKey: ref, Message: message,
			TimeoutSeconds: ptr.To(timeout), FromSessionKey: c.session.Spec.Key},
	}
	if denied, err := c.createOnce(ctx, s); denied != nil || err != nil {
		return denied, err
	}
	runID := TurnID(s.UID, "round-1")
	if timeout == 0 {
		return statusResult{RunID: runID, Status: statusAccepted}, nil
	}
	st, err := c.waitSend(ctx, s, time.Duration(timeout)*time.Second+5*time.Second)
	if err != nil {
		return nil, err
	}
	switch st.Status {
	case v1.SendOK:
		return statusResult{RunID: runID, Status: statusOK, Reply: st.Reply}, nil
	case v1.SendTimeout:
		return statusResult{RunID: runID, Status: statusTimeout, Error: st.Error}, nil
	default:
		return statusResult{RunID: runID, Status: statusError, Error: st.Error}, nil
	}
}

// waitSend watches the send until the controller reports ok, timeout or error. The
// controller owns the deadline; grace only bounds a watch that sees nothing. The API server
// ends watches now and then: a closed watch is followed by one read and a new watch.
func (c *toolCall) waitSend(ctx context.Context, s *v1.SessionSend, grace time.Duration) (*v1.SessionSendStatus, error) {
	if c.e.opts.Watcher == nil {
		return nil, errors.New("this manager cannot watch sends; use timeoutSeconds 0")
	}
	limit := c.e.clock.NewTimer(grace)
	defer limit.Stop()
	for {
		if sendDone(&s.Status) {
			return &s.Status, nil
		}
		st, closed, err := c.watchSend(ctx, s, limit.C())
		if !closed {
			return st, err
		}
		// Not immediately: a watch refused at once must not become a busy loop.
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-limit.C():
			return noOutcome(), nil
		case <-c.e.clock.After(rewatchAfter):
		}
		if err := c.e.opts.APIReader.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return nil, err
		}
	}
}

// noOutcome is the result of a wait that saw no outcome within its bound.
func noOutcome() *v1.SessionSendStatus {
	return &v1.SessionSendStatus{Status: v1.SendTimeout, Error: "no outcome reported in time"}
}

// rewatchAfter is the pause before a closed watch of a send is read and opened again.
const rewatchAfter = 200 * time.Millisecond

func sendDone(st *v1.SessionSendStatus) bool {
	return st.Status == v1.SendOK || st.Status == v1.SendTimeout || st.Status == v1.SendError
}

// watchSend follows one watch of the send; closed reports that the watch ended first.
func (c *toolCall) watchSend(ctx context.Context, s *v1.SessionSend, limit <-chan time.Time) (*v1.SessionSendStatus, bool, error) {
	w, err := c.e.opts.Watcher.Watch(ctx, &v1.SessionSendList{}, client.InNamespace(s.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", s.Name)})
	if err != nil {
		return nil, true, nil
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, false, context.Cause(ctx)
		case <-limit:
			return noOutcome(), false, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, true, nil
			}
			if got, isSend := ev.Object.(*v1.SessionSend); isSend && ev.Type != watch.Deleted && sendDone(&got.Status) {
				return &got.Status, false, nil
			}
		}
	}
}
