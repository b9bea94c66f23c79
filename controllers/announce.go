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

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/secretaccess"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// blockedAtDelivery starts the reason of an announce the send policy stopped.
const blockedAtDelivery = "blocked at delivery: "

// maxAnnounceMessage bounds the announce text kept in status.
const maxAnnounceMessage = 1024

// announcer runs the last part of an announce step: the model's reply is ANNOUNCE_SKIP,
// empty, blocked by the send policy, without a sink, or delivered.
type announcer struct {
	lookup    lookup.Lookup
	apiReader client.Reader
	deliverer *delivery.Deliverer
	// events records announces for sinks of kind events.
	events recorder.EventRecorder
}

// outcome is the announce of a finished announce turn: delivered, skipped or failed.
// threadID, when set, is the thread of the session's channel it goes to.
func (a *announcer) outcome(ctx context.Context, session *v1.AgentSession, threadID string, res turns.TurnResult, key string) *v1.Announce {
	if res.Err != nil {
		return &v1.Announce{Status: v1.AnnounceFailed, Reason: "the announce turn failed: " + textutil.Truncate(res.Err.Error(), maxErrorText)}
	}
	return a.announce(ctx, session, threadID, res.Text, key)
}

// announceEvent queues the Event an announce deserves, if any.
func announceEvent[T client.Object](f *flow[T], a *v1.Announce) {
	if typ, ok := announceEventType(a); ok {
		f.event(typ, "Announce", "announce %s: %s", a.Status, a.Reason)
	}
}

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

// announce delivers reply to the session's channel; threadID, when set, overrides the thread
// of its delivery context (a thread-bound sub-agent's announce in its requester).
func (a *announcer) announce(ctx context.Context, session *v1.AgentSession, threadID, reply, key string) *v1.Announce {
	out := &v1.Announce{Message: textutil.Truncate(strings.TrimSpace(reply), maxAnnounceMessage)}
	if IsSkip(reply, v1.AnnounceSkip) {
		out.Status, out.Reason = v1.AnnounceSkipped, v1.AnnounceSkip
		return out
	}
	if strings.TrimSpace(reply) == "" {
		out.Status, out.Reason = v1.AnnounceSkipped, "the announce reply was empty"
		return out
	}
	pol, err := a.lookup.SessionPolicy(ctx, session.Namespace)
	if err != nil {
		out.Status, out.Reason = v1.AnnounceFailed, err.Error()
		return out
	}
	var spec *v1.SendPolicySpec
	if pol != nil {
		spec = &pol.Spec.SendPolicy
	}
	dc := policy.DestinationOf(session)
	// The policy is checked again here, on the chat the announce actually goes to: it may
	// have changed since admission, and nothing leaves the cluster that it denies.
	if d := policy.DecideDelivery(spec, session, dc); !d.Allowed {
		out.Status, out.Reason = v1.AnnounceSkipped, blockedAtDelivery+d.Reason
		return out
	}
	if threadID != "" {
		dc.ThreadID = threadID
	}
	out.Target = dc.Channel
	if dc.To != "" {
		out.Target += ":" + dc.To
	}
	if dc.ThreadID != "" {
		out.Target += "#" + dc.ThreadID
	}
	sink, err := a.sinkFor(ctx, pol, dc.Channel, a.recordOn(session, out.Target))
	if err != nil {
		out.Status, out.Reason = v1.AnnounceFailed, err.Error()
		return out
	}
	if sink == nil {
		out.Status, out.Reason = v1.AnnounceNoSink, fmt.Sprintf("no delivery sink for channel %q in SessionPolicy default spec.delivery", dc.Channel)
		return out
	}
	err = a.deliverer.Deliver(ctx, *sink, delivery.Message{
		Namespace: session.Namespace, SessionKey: session.Spec.Key, Channel: dc.Channel, To: dc.To,
		AccountID: dc.AccountID, ThreadID: dc.ThreadID, Text: strings.TrimSpace(reply), IdempotencyKey: key,
	})
	if err != nil {
		out.Status, out.Reason = v1.AnnounceFailed, err.Error()
		return out
	}
	out.Status = v1.AnnounceDelivered
	return out
}

// sinkFor is the channel's sink; record takes the announces of an events sink.
func (a *announcer) sinkFor(ctx context.Context, pol *v1.SessionPolicy, channel string, record func(delivery.Message)) (*delivery.Sink, error) {
	if pol == nil {
		return nil, nil
	}
	for _, d := range pol.Spec.Delivery {
		if !strings.EqualFold(string(d.Channel), channel) {
			continue
		}
		if d.Kind == v1.DeliveryEvents {
			return &delivery.Sink{Record: record}, nil
		}
		sink := &delivery.Sink{URL: d.URL}
		if ref := d.SecretRef; ref != nil {
			// Only a Secret the policy's writer vouched for, or one that opted in: a sink
			// must not carry a token its writer could not read.
			tok, err := secretaccess.Value(ctx, a.apiReader, pol, ref.Name, ref.Key)
			if err != nil {
				return nil, fmt.Errorf("delivery token: %w", err)
			}
			sink.Token = strings.TrimSpace(string(tok))
		}
		return sink, nil
	}
	return nil, nil
}

// recordOn delivers to the events sink kind: an AnnounceDelivered Event on the session.
func (a *announcer) recordOn(session *v1.AgentSession, target string) func(delivery.Message) {
	return func(m delivery.Message) {
		if a.events != nil {
			a.events.Eventf(session, nil, corev1.EventTypeNormal, "AnnounceDelivered", "Deliver",
				"announce to %s: %s", target, textutil.Truncate(m.Text, maxAnnounceEventText))
		}
	}
}

// maxAnnounceEventText keeps an announce Event's note under the API's 1 KiB.
const maxAnnounceEventText = 900
