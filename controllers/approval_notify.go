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
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// notifyApproval tells the session's channel that a tool call waits for a person: a webhook
// sink of the SessionPolicy gets {"type": "approval.requested", ...}, so a chat bridge can
// ask someone; a chat sink posts the text to the session's chat. Best effort, once (the idempotency key is the approval's): the approval
// waits whether or not the message arrives, and the send policy is asked first, as for an
// announce. An events sink gets nothing: the AwaitingApproval Event already shows it.
func (r *ToolApprovalReconciler) notifyApproval(ctx context.Context, ta *sessionsv1alpha1.ToolApproval) {
	if r.announcer == nil {
		return
	}
	a := r.announcer
	session, err := a.lookup.SessionByKey(ctx, ta.Namespace, ta.Spec.SessionKey)
	if err != nil || session == nil {
		return
	}
	pol, err := a.lookup.SessionPolicy(ctx, ta.Namespace)
	if err != nil || pol == nil {
		return
	}
	dc := policy.DestinationOf(session)
	if d := policy.DecideDelivery(&pol.Spec.SendPolicy, session, dc); !d.Allowed {
		return
	}
	text := fmt.Sprintf("Agent %s wants to call %s in session %s; it waits for a person to approve or deny ToolApproval %s.",
		ta.Spec.AgentID, ta.Spec.Tool, ta.Spec.SessionKey, ta.Name)
	key := "approval/" + string(ta.UID) + "/requested"
	if chat := sinkOf(pol, dc.Channel); chat != nil && chat.Kind.IsChat() {
		err = a.notifyChat(ctx, pol, chat, session, dc, text, key)
	} else {
		sink, serr := a.sinkFor(ctx, pol, dc.Channel, nil)
		if serr != nil || sink == nil || sink.Record != nil {
			return
		}
		err = a.deliverer.Deliver(ctx, *sink, delivery.Message{
			Namespace: ta.Namespace, SessionKey: ta.Spec.SessionKey, Channel: dc.Channel, To: dc.To, AccountID: dc.AccountID,
			ThreadID: dc.ThreadID, IdempotencyKey: key, Type: delivery.TypeApprovalRequested, Text: text,
			Approval: &delivery.ApprovalNotice{Name: ta.Name, Tool: ta.Spec.Tool, Arguments: ta.Spec.Arguments,
				ExpiresAt: ta.Spec.ExpiresAt.UTC().Format(time.RFC3339)},
		})
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).V(2).Info("approval request not delivered", "toolApproval", ta.Name, "error", err.Error())
		if r.Recorder != nil {
			r.Recorder.Eventf(ta, nil, corev1.EventTypeWarning, "NotifyFailed", "Deliver", "approval request to %s not delivered: %v", dc.Channel, err)
		}
	}
}
