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

package announce

import (
	"context"
	"fmt"

	"strings"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// NotifyApproval tells the session's channel that a tool call waits for a person: a webhook
// sink of the SessionPolicy gets {"type": "approval.requested", ...}, so a chat bridge can
// ask someone; a chat sink posts the text to the session's chat. Best effort, once (the idempotency key is the approval's): the approval
// waits whether or not the message arrives, and the send policy is asked first, as for an
// announce. An events sink gets nothing: the AwaitingApproval Event already shows it. It
// returns the channel told and the delivery's error; nothing to tell is no error.
func (a *Announcer) NotifyApproval(ctx context.Context, ta *sessionsv1alpha1.ToolApproval) (string, error) {
	session, err := a.lookup.SessionByKey(ctx, ta.Namespace, ta.Spec.SessionKey)
	if err != nil || session == nil {
		return "", nil
	}
	pol, err := a.lookup.SessionPolicy(ctx, ta.Namespace)
	if err != nil || pol == nil {
		return "", nil
	}
	dc := policy.DestinationOf(session)
	if d := policy.DecideDelivery(&pol.Spec.SendPolicy, session, dc); !d.Allowed {
		return "", nil
	}
	text := fmt.Sprintf("Agent %s wants to call %s in session %s; it waits for a person to approve or deny ToolApproval %s.",
		ta.Spec.AgentID, ta.Spec.Tool, ta.Spec.SessionKey, ta.Name)
	if ta.Spec.IsBudget() {
		text = fmt.Sprintf("Agent %s in session %s is at its budget: %s. It waits for a person to approve or deny ToolApproval %s.",
			ta.Spec.AgentID, ta.Spec.SessionKey, ta.Spec.Budget.Message, ta.Name)
	}
	key := "approval/" + string(ta.UID) + "/requested"
	if chat := sinkOf(pol, dc.Channel); chat != nil && chat.Kind.IsChat() {
		err = a.notifyChat(ctx, pol, chat, session, dc, text, key)
	} else {
		sink, serr := a.sinkFor(ctx, pol, dc.Channel, nil)
		if serr != nil || sink == nil || sink.Record != nil {
			return "", nil
		}
		err = a.deliverer.Deliver(ctx, *sink, delivery.Message{
			Namespace: ta.Namespace, SessionKey: ta.Spec.SessionKey, Channel: dc.Channel, To: dc.To, AccountID: dc.AccountID,
			ThreadID: dc.ThreadID, IdempotencyKey: key, Type: delivery.TypeApprovalRequested, Text: text,
			Approval: &delivery.ApprovalNotice{Name: ta.Name, Kind: string(ta.Spec.Kind), Tool: ta.Spec.Tool, Arguments: ta.Spec.Arguments, Budget: budgetAsk(ta),
				ExpiresAt: ta.Spec.ExpiresAt.UTC().Format(time.RFC3339)},
		})
	}
	return dc.Channel, err
}

// notifyChat posts text once to the session's chat on a chat sink (no retry: best effort).
func (a *Announcer) notifyChat(ctx context.Context, pol *sessionsv1alpha1.SessionPolicy, sink *sessionsv1alpha1.DeliverySink, session *sessionsv1alpha1.AgentSession,
	dc sessionsv1alpha1.DeliveryContext, text, key string) error {
	chatID := policy.ChatIDOf(session, dc)
	if chatID == "" {
		return fmt.Errorf("no %s chat id for session %s", dc.Channel, session.Spec.Key)
	}
	tok, err := a.secret(ctx, pol, sink.SecretRef)
	if err != nil {
		return err
	}
	format, _ := delivery.FormatOf(string(sink.Kind))
	cs := chatSinkOf(sink, session.Namespace, tok)
	thread := dc.ThreadID
	if strings.HasPrefix(thread, syntheticThreadPrefix) {
		thread = ""
	}
	_, err = a.deliverer.Post(ctx, cs, delivery.ChatMessage{To: chatID, Text: format.Render(text)[0], Thread: thread, Key: key})
	return err
}

// budgetAsk is what a budget's ToolApproval asks, "" for a tool call's.
func budgetAsk(ta *sessionsv1alpha1.ToolApproval) string {
	if !ta.Spec.IsBudget() {
		return ""
	}
	return ta.Spec.Budget.Message
}
