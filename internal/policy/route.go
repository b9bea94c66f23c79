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

package policy

import (
	"fmt"
	"strings"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// ChatIDOf is the chat a session's announces go to on a chat sink, as the specification
// says: the delivery context's to (dc, DestinationOf), else spec.lastTo, else the id in
// the session key; "" when none names one.
func ChatIDOf(s *sessionsv1alpha1.AgentSession, dc sessionsv1alpha1.DeliveryContext) string {
	if id := sessionkey.ChatIDOfTo(dc.To); id != "" {
		return id
	}
	if id := sessionkey.ChatIDOfTo(s.Spec.LastTo); id != "" {
		return id
	}
	return sessionkey.ChatIDOfKey(s.Spec.Key, dc.Channel)
}

// Route is where a session's announces go.
type Route struct {
	// Channel is the channel of the session's destination.
	Channel string
	// Sink is the SessionPolicy sink of that channel; nil when there is none (noSink).
	Sink *sessionsv1alpha1.DeliverySink
	// To is the recipient: the chat id of a chat sink, the delivery context's to otherwise.
	To string
	// ThreadID is the thread of the session's delivery context, if any.
	ThreadID string
	// Problem says why an announce would fail before anything is sent ("" when none).
	Problem string
}

// RouteOf is where the announces of session s go under policy p (nil: no sinks).
func RouteOf(p *sessionsv1alpha1.SessionPolicy, s *sessionsv1alpha1.AgentSession) Route {
	dc := DestinationOf(s)
	r := Route{Channel: dc.Channel, To: dc.To, ThreadID: dc.ThreadID}
	if p != nil {
		for i, d := range p.Spec.Delivery {
			if strings.EqualFold(string(d.Channel), dc.Channel) {
				r.Sink = &p.Spec.Delivery[i]
				break
			}
		}
	}
	if r.Sink != nil && r.Sink.Kind.IsChat() {
		r.To = ChatIDOf(s, dc)
		if r.To == "" {
			r.Problem = fmt.Sprintf("no %s chat id: set spec.deliveryContext.to or spec.lastTo (its key names no chat)", dc.Channel)
		}
	}
	return r
}
