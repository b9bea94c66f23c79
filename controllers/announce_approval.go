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

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// notifyChat posts text once to the session's chat on a chat sink (no retry: best effort).
func (a *announcer) notifyChat(ctx context.Context, pol *sessionsv1alpha1.SessionPolicy, sink *sessionsv1alpha1.DeliverySink, session *sessionsv1alpha1.AgentSession,
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
