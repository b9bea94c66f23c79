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
	"encoding/json"

	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
)

// follow hands each state of the send to yield, then each change /events' hub publishes,
// until the send has ended, yield returns false or ctx ends. sub, when set, was subscribed
// before send was read (or created): send is its first state. Without one, the send is read
// from the API server after subscribing. The ended send comes whole: the manager hands the
// store its finishing status write (sessionsend.Feed), not the trimmed copy its cache keeps,
// so it is not read again. A subscriber cut off for lagging subscribes again and reads the
// send anew: no state is lost, some may be seen twice.
func (h *agentHandler) follow(ctx context.Context, send *sessionsv1alpha1.SessionSend, sub *events.Subscription, yield func(*sessionsv1alpha1.SessionSend) bool) error {
	return h.followLive(ctx, send, sub, yield, nil)
}

// followLive is follow that also hands the namespace's session.delta events to live (nil:
// none), for the caller to pick its run's.
func (h *agentHandler) followLive(ctx context.Context, send *sessionsv1alpha1.SessionSend, sub *events.Subscription, yield func(*sessionsv1alpha1.SessionSend) bool, live func(events.SessionDelta) bool) error {
	key := client.ObjectKeyFromObject(send)
	cur := send
	for {
		if sub == nil {
			sub = h.hub.Subscribe("")
			cur = &sessionsv1alpha1.SessionSend{}
			if err := h.call.APIReader.Get(ctx, key, cur); err != nil {
				sub.Close()
				return err
			}
		}
		if !yield(cur) || terminal(TaskState(&cur.Status)) {
			sub.Close()
			return nil
		}
		done, err := h.changes(ctx, sub, send, yield, live)
		sub.Close()
		if done || err != nil {
			return err
		}
		sub = nil
	}
}

// changes reads sub until the send ends (true), the subscription is cut off (false) or ctx
// ends.
func (h *agentHandler) changes(ctx context.Context, sub *events.Subscription, send *sessionsv1alpha1.SessionSend, yield func(*sessionsv1alpha1.SessionSend) bool, live func(events.SessionDelta) bool) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return true, context.Cause(ctx)
		case e, ok := <-sub.C:
			if !ok {
				return false, nil
			}
			if d, ok := deltaOf(e, send.Namespace); ok && live != nil {
				if !live(d) {
					return true, nil
				}
				continue
			}
			s, gone := sendOf(e, send)
			switch {
			case gone:
				return true, errGone
			case s == nil:
				continue
			case terminal(TaskState(&s.Status)):
				// The finishing write's object, whole (see follow): no read of it again.
				yield(s)
				return true, nil
			case !yield(s):
				return true, nil
			}
		}
	}
}

// sendOf is the send an event carries when it is a change of send, and whether it deleted it.
func sendOf(e events.Event, send *sessionsv1alpha1.SessionSend) (*sessionsv1alpha1.SessionSend, bool) {
	if e.Kind != events.KindSendsChanged || e.Namespace != send.Namespace {
		return nil, false
	}
	var ch events.SessionChange
	if json.Unmarshal(e.Data, &ch) != nil {
		return nil, false
	}
	s := &sessionsv1alpha1.SessionSend{}
	if json.Unmarshal(ch.Object, s) != nil || s.Name != send.Name || s.UID != send.UID {
		return nil, false
	}
	return s, ch.Phase == "deleted"
}
