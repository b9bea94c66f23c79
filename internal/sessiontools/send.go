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

package sessiontools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/protocol"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// sessions_send bounds: the seeds' default wait is > 0; the maximum is every door's.
const (
	DefaultSendTimeoutSeconds = sessionsv1alpha1.DefaultSendTimeoutSeconds
	MaxSendTimeoutSeconds     = sessionsv1alpha1.MaxSendTimeoutSeconds
)

type sendArgs struct {
	SessionKey     string `json:"sessionKey"`
	Label          string `json:"label"`
	AgentID        string `json:"agentId"`
	Message        string `json:"message"`
	TimeoutSeconds Number `json:"timeoutSeconds"`
}

func sendTool() Tool {
	return Tool{Name: "sessions_send",
		Description: "Send a message into another session, named by sessionKey, label or agentId (that agent's main session). timeoutSeconds > 0 waits up to that many seconds for the reply (default 30, at most 600, a fraction rounds up) and returns status ok with the whole reply, up to 256 KiB (\"\" and noReply: true when the target answered nothing or REPLY_SKIP); 0 is fire-and-forget.",
		Schema: Schema(map[string]any{
			"sessionKey": map[string]any{"type": "string", "description": "session key, sessionId, or main"},
			"label":      map[string]any{"type": "string", "description": "the label of the one active session to send to"},
			"agentId":    map[string]any{"type": "string", "description": "send to this agent's main session"},
			"message":    map[string]any{"type": "string"},
			"timeoutSeconds": map[string]any{"type": "number", "minimum": 0, "maximum": MaxSendTimeoutSeconds,
				"description": "seconds to wait for the reply: 0 = fire-and-forget, default 30, at most 600; a fraction waits up to the next whole second; below 0 or above 600 is an error, never cut"},
		}, "message"),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a sendArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			if a.Message == "" {
				return nil, errors.New("message is required")
			}
			// A label is looked for among the sessions the caller sees only: what lies beyond
			// is "not found", never a key in a message.
			visible, err := c.visibility(ctx)
			if err != nil {
				return nil, err
			}
			ref, err := c.lookup().TargetRefKey(ctx, c.Namespace, lookup.TargetRef{Ref: a.SessionKey, Label: a.Label, AgentID: a.AgentID, Visible: visible})
			if err != nil {
				return nil, err
			}
			timeout, err := SendTimeout(a.TimeoutSeconds)
			if err != nil {
				return nil, err
			}
			return c.send(ctx, ref, a.Message, timeout)
		}}
}

// SendTimeout is sessions_send's wait: default 30, 0..600. A fraction rounds up to a whole
// second (0.5 waits, it is never fire-and-forget); a value outside is an error that names
// the bounds, never cut silently: longer waits are for MCP's tasks extension.
func SendTimeout(n Number) (int32, error) {
	if !n.Set {
		return DefaultSendTimeoutSeconds, nil
	}
	v := math.Ceil(n.F)
	if n.F < 0 || v > MaxSendTimeoutSeconds {
		return 0, fmt.Errorf("timeoutSeconds %v is out of range: 0 to %d seconds (0 = fire-and-forget); for a longer wait send with timeoutSeconds 0 and follow the send (sessions_history, session_status) or use MCP's tasks extension", n.F, MaxSendTimeoutSeconds)
	}
	return int32(v), nil
}

// createOnce creates obj, or reads the one an earlier run of the call created. A refusal by
// the access layer, RBAC or admission comes back as a result (Refusal), with its message.
func (c *Call) createOnce(ctx context.Context, obj client.Object) (*StatusResult, error) {
	if c.Stamp != nil {
		if err := c.Stamp(ctx, obj); err != nil {
			return nil, err
		}
	}
	err := c.may(ctx, createRight(obj), "")
	if err == nil {
		err = c.Client.Create(ctx, obj)
	}
	switch {
	case err == nil:
		return nil, nil
	case apierrors.IsAlreadyExists(err):
		return nil, c.apiReader().Get(ctx, client.ObjectKeyFromObject(obj), obj)
	}
	if r := Refusal(err); r != nil {
		return r, nil
	}
	return nil, err
}

// SendsToItself says ref names the calling session itself: by its key, its sessionId, or an
// alias ("main", "global") of its agent's main session. Such a send would wait on its own
// lane until the timeout, so the tool refuses it.
func SendsToItself(ref string, self *sessionsv1alpha1.AgentSession) bool {
	if self == nil {
		return false
	}
	resolved, err := lookup.SendTargetKey(ref, self.Spec.AgentID)
	return err == nil && resolved == self.Spec.Key || (self.Status.SessionID != "" && ref == self.Status.SessionID)
}

func (c *Call) send(ctx context.Context, ref, message string, timeout int32) (any, error) {
	s, denied, err := c.StartSend(ctx, ref, message, timeout)
	if denied != nil || err != nil {
		return denied, err
	}
	if timeout == 0 || c.NoWait {
		return StatusResult{RunID: TurnID(s.UID, "round-1"), Status: StatusAccepted}, nil
	}
	return c.Wait(ctx, s, time.Duration(timeout)*time.Second+5*time.Second)
}

// SendOutcome is the sessions_send result of a send whose outcome is known (ok, timeout or
// error), as Wait returns it; false while the send has none yet.
func SendOutcome(s *sessionsv1alpha1.SessionSend) (StatusResult, bool) {
	if !sendDone(&s.Status) {
		return StatusResult{}, false
	}
	return outcome(TurnID(s.UID, "round-1"), &s.Status), true
}

// StartSend creates the call's SessionSend without waiting for it: the send, or the
// refusal (Refusal) with the API server's message when RBAC or admission refused it.
func (c *Call) StartSend(ctx context.Context, ref, message string, timeout int32) (*sessionsv1alpha1.SessionSend, *StatusResult, error) {
	if SendsToItself(ref, c.Session) {
		return nil, nil, fmt.Errorf("sessions_send: %q is this session itself; answer in your reply instead of sending to yourself", ref)
	}
	s := &sessionsv1alpha1.SessionSend{
		ObjectMeta: metav1.ObjectMeta{Name: c.ObjectName("send-"), Namespace: c.Namespace},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: ref, Message: message,
			TimeoutSeconds: ptr.To(timeout), FromSessionKey: c.sessionKey()},
	}
	denied, err := c.createOnce(ctx, s)
	return s, denied, err
}

// Wait waits for the send's outcome and returns it as the sessions_send result. The
// controller owns the deadline; grace only bounds a wait that sees nothing.
func (c *Call) Wait(ctx context.Context, s *sessionsv1alpha1.SessionSend, grace time.Duration) (StatusResult, error) {
	st, err := c.waitSend(ctx, s, grace)
	if err != nil {
		return StatusResult{}, err
	}
	if st, err = c.wholeReply(ctx, s.Namespace, st); err != nil {
		return StatusResult{}, err
	}
	return outcome(TurnID(s.UID, "round-1"), st), nil
}

// WithWholeReply is the send with status.reply whole (up to transcript.MaxReplyBytes) when
// status keeps only its first 8 KiB (replyTruncated): read from round 1's record in the
// target's transcript. Every door that returns a reply returns this one.
func (e *Env) WithWholeReply(ctx context.Context, s *sessionsv1alpha1.SessionSend) (*sessionsv1alpha1.SessionSend, error) {
	st, err := e.wholeReply(ctx, s.Namespace, &s.Status)
	if err != nil || st == &s.Status {
		return s, err
	}
	out := s.DeepCopy()
	out.Status = *st
	return out, nil
}

// wholeReply is st with its reply whole, or st itself when status holds all of it.
func (e *Env) wholeReply(ctx context.Context, namespace string, st *sessionsv1alpha1.SessionSendStatus) (*sessionsv1alpha1.SessionSendStatus, error) {
	if !st.ReplyTruncated || len(st.Turns) == 0 || st.Turns[0].ReplySeq == 0 {
		return st, nil
	}
	if e.Store == nil {
		return nil, errors.New("the reply is longer than status keeps and this door cannot read transcripts")
	}
	target, err := e.lookup().SessionByKey(ctx, namespace, st.Turns[0].Session)
	if err == nil && (target == nil || target.Status.SessionID == "") {
		err = fmt.Errorf("session %q of the reply not found", st.Turns[0].Session)
	}
	if err != nil {
		return nil, err
	}
	text, err := transcript.TextAt(ctx, e.Store, namespace, target.Status.SessionID, st.Turns[0].ReplySeq)
	if err != nil {
		return nil, err
	}
	whole := st.DeepCopy()
	whole.Reply = text
	return whole, nil
}

// outcome is the sessions_send result of a send's status.
func outcome(runID string, st *sessionsv1alpha1.SessionSendStatus) StatusResult {
	switch st.Status {
	case sessionsv1alpha1.SendOK:
		if protocol.NoReply(st.Reply) {
			return StatusResult{RunID: runID, Status: StatusOK, NoReply: true}
		}
		return StatusResult{RunID: runID, Status: StatusOK, Reply: st.Reply}
	case sessionsv1alpha1.SendTimeout:
		return StatusResult{RunID: runID, Status: StatusTimeout, Error: st.Error}
	default:
		return StatusResult{RunID: runID, Status: StatusError, Error: st.Error}
	}
}

// waitSend watches the send until the controller reports ok, timeout or error. The
// controller owns the deadline; grace only bounds a watch that sees nothing. The API server
// ends watches now and then: a closed watch is followed by one read and a new watch.
func (c *Call) waitSend(ctx context.Context, s *sessionsv1alpha1.SessionSend, grace time.Duration) (*sessionsv1alpha1.SessionSendStatus, error) {
	if c.Watcher == nil {
		return nil, errors.New("this manager cannot watch sends; use timeoutSeconds 0")
	}
	limit := c.clock().NewTimer(grace)
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
		case <-c.clock().After(rewatchAfter):
		}
		if err := c.apiReader().Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return nil, err
		}
	}
}

// noOutcome is the result of a wait that saw no outcome within its bound.
func noOutcome() *sessionsv1alpha1.SessionSendStatus {
	return &sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendTimeout, Error: "no outcome reported in time"}
}

// rewatchAfter is the pause before a closed watch of a send is read and opened again.
const rewatchAfter = 200 * time.Millisecond

func sendDone(st *sessionsv1alpha1.SessionSendStatus) bool {
	return st.Status == sessionsv1alpha1.SendOK || st.Status == sessionsv1alpha1.SendTimeout || st.Status == sessionsv1alpha1.SendError
}

// watchSend follows one watch of the send; closed reports that the watch ended first.
func (c *Call) watchSend(ctx context.Context, s *sessionsv1alpha1.SessionSend, limit <-chan time.Time) (*sessionsv1alpha1.SessionSendStatus, bool, error) {
	w, err := c.Watcher.Watch(ctx, &sessionsv1alpha1.SessionSendList{}, client.InNamespace(s.Namespace),
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
			if got, isSend := ev.Object.(*sessionsv1alpha1.SessionSend); isSend && ev.Type != watch.Deleted && sendDone(&got.Status) {
				return &got.Status, false, nil
			}
		}
	}
}
