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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
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

// Announcer runs the last part of an announce step: the model's reply is ANNOUNCE_SKIP,
// empty, blocked by the send policy, without a sink, or delivered.
type Announcer struct {
	lookup    lookup.Lookup
	apiReader client.Reader
	deliverer *delivery.Deliverer
	// events records announces for sinks of kind events.
	events recorder.EventRecorder
	// clock stamps the parts a chat sink took; nil is the real clock.
	clock clock.Clock
}

// New builds the announcer the owner kinds and the ToolApproval controller share:
// l finds sessions and policies, api reads Secrets uncached, d posts, events records the
// announces of events sinks; clk nil is the real clock.
func New(l lookup.Lookup, api client.Reader, d *delivery.Deliverer, events recorder.EventRecorder, clk clock.Clock) *Announcer {
	return &Announcer{lookup: l, apiReader: api, deliverer: d, events: events, clock: clk}
}

// Input is what one announce delivers, and how far it got.
type Input struct {
	// session is the session whose channel the announce goes to.
	Session *sessionsv1alpha1.AgentSession
	// reply is the announce text; key its idempotency key (the turn's id).
	reply, Key string
	// threadID, when set, overrides the thread of the session's delivery context for the
	// webhook and events kinds (a thread-bound run's announce in its requester).
	ThreadID string
	// bind asks a chat sink to start a thread with the first part and keep the rest (and
	// the child's later announces) in it: a SubagentRun with spec.thread.
	Bind bool
	// prev is the announce so far: a chat sink's parts go on from where it stopped.
	Prev *sessionsv1alpha1.Announce
}

// Outcome is the announce of a finished announce turn: delivered, skipped, failed, or
// delivering (a chat sink took some parts; the rest follow after the returned wait).
func (a *Announcer) Outcome(ctx context.Context, in Input, res turns.TurnResult) (*sessionsv1alpha1.Announce, time.Duration) {
	if res.Err != nil {
		return &sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceFailed, Reason: "the announce turn failed: " + textutil.Truncate(res.Err.Error(), ownerflow.MaxErrorText)}, 0
	}
	in.reply = res.Text
	return a.announce(ctx, in)
}

// Event queues the Event an announce deserves, if any.
func Event[T client.Object](f *ownerflow.Flow[T], a *sessionsv1alpha1.Announce) {
	if typ, ok := announceEventType(a); ok {
		f.Event(typ, "Announce", "announce %s: %s", a.Status, a.Reason)
	}
}

// announceEventType says whether an announce deserves an Event, and of which type. A skip
// (ANNOUNCE_SKIP, empty, no sink) is the common case and stays in status only: each Event
// is an API write.
func announceEventType(a *sessionsv1alpha1.Announce) (string, bool) {
	switch {
	case a.Status == sessionsv1alpha1.AnnounceDelivered:
		return corev1.EventTypeNormal, true
	case a.Status == sessionsv1alpha1.AnnounceFailed, strings.HasPrefix(a.Reason, blockedAtDelivery):
		return corev1.EventTypeWarning, true
	}
	return "", false
}

// announce delivers the reply to the session's channel; a chat sink's announce may take
// several reconciles (one part each, recorded before the next), the wait says when the
// next is due.
func (a *Announcer) announce(ctx context.Context, in Input) (*sessionsv1alpha1.Announce, time.Duration) {
	session, reply := in.Session, in.reply
	out := &sessionsv1alpha1.Announce{Message: textutil.Truncate(strings.TrimSpace(reply), maxAnnounceMessage)}
	if IsSkip(reply, sessionsv1alpha1.AnnounceSkip) {
		out.Status, out.Reason = sessionsv1alpha1.AnnounceSkipped, sessionsv1alpha1.AnnounceSkip
		return out, 0
	}
	if strings.TrimSpace(reply) == "" {
		out.Status, out.Reason = sessionsv1alpha1.AnnounceSkipped, "the announce reply was empty"
		return out, 0
	}
	pol, err := a.lookup.SessionPolicy(ctx, session.Namespace)
	if err != nil {
		out.Status, out.Reason = sessionsv1alpha1.AnnounceFailed, err.Error()
		return out, 0
	}
	var spec *sessionsv1alpha1.SendPolicySpec
	if pol != nil {
		spec = &pol.Spec.SendPolicy
	}
	dc := policy.DestinationOf(session)
	// The policy is checked again here, on the chat the announce actually goes to: it may
	// have changed since admission, and nothing leaves the cluster that it denies.
	if d := policy.DecideDelivery(spec, session, dc); !d.Allowed {
		out.Status, out.Reason = sessionsv1alpha1.AnnounceSkipped, blockedAtDelivery+d.Reason
		return out, 0
	}
	sink := sinkOf(pol, dc.Channel)
	if sink != nil && sink.Kind.IsChat() {
		return a.deliverChat(ctx, in, pol, sink, dc, out)
	}
	if in.ThreadID != "" {
		dc.ThreadID = in.ThreadID
	}
	out.Target = targetOf(dc.Channel, dc.To, dc.ThreadID)
	if sink == nil {
		out.Status, out.Reason = sessionsv1alpha1.AnnounceNoSink, fmt.Sprintf("no delivery sink for channel %q in SessionPolicy default spec.delivery", dc.Channel)
		return out, 0
	}
	hook, err := a.webhookSink(ctx, pol, sink, a.recordOn(session, out.Target))
	if err != nil {
		out.Status, out.Reason = sessionsv1alpha1.AnnounceFailed, err.Error()
		return out, 0
	}
	err = a.deliverer.Deliver(ctx, *hook, delivery.Message{
		Namespace: session.Namespace, SessionKey: session.Spec.Key, Channel: dc.Channel, To: dc.To,
		AccountID: dc.AccountID, ThreadID: dc.ThreadID, Text: strings.TrimSpace(reply), IdempotencyKey: in.Key,
	})
	if err != nil {
		out.Status, out.Reason = sessionsv1alpha1.AnnounceFailed, err.Error()
		return out, 0
	}
	out.Status = sessionsv1alpha1.AnnounceDelivered
	return out, 0
}

// targetOf is an announce's target as status shows it: channel:to#thread.
func targetOf(channel, to, thread string) string {
	t := channel
	if to != "" {
		t += ":" + to
	}
	if thread != "" {
		t += "#" + thread
	}
	return t
}

// sinkOf is the policy's sink for channel, nil when it has none.
func sinkOf(pol *sessionsv1alpha1.SessionPolicy, channel string) *sessionsv1alpha1.DeliverySink {
	if pol == nil {
		return nil
	}
	for i, d := range pol.Spec.Delivery {
		if strings.EqualFold(string(d.Channel), channel) {
			return &pol.Spec.Delivery[i]
		}
	}
	return nil
}

// sinkFor is the channel's webhook or events sink (nil for none, or a chat sink); record
// takes the announces of an events sink.
func (a *Announcer) sinkFor(ctx context.Context, pol *sessionsv1alpha1.SessionPolicy, channel string, record func(delivery.Message)) (*delivery.Sink, error) {
	d := sinkOf(pol, channel)
	if d == nil || d.Kind.IsChat() {
		return nil, nil
	}
	return a.webhookSink(ctx, pol, d, record)
}

// webhookSink is d (kind webhook or events) with its token and signing key.
func (a *Announcer) webhookSink(ctx context.Context, pol *sessionsv1alpha1.SessionPolicy, d *sessionsv1alpha1.DeliverySink, record func(delivery.Message)) (*delivery.Sink, error) {
	if d.Kind == sessionsv1alpha1.DeliveryEvents {
		return &delivery.Sink{Record: record}, nil
	}
	sink := &delivery.Sink{URL: d.URL}
	if ref := d.SecretRef; ref != nil {
		tok, err := a.secret(ctx, pol, ref)
		if err != nil {
			return nil, fmt.Errorf("delivery token: %w", err)
		}
		sink.Token = tok
	}
	if ref := d.SigningSecretRef; ref != nil {
		s, err := a.secret(ctx, pol, ref)
		if err != nil {
			return nil, fmt.Errorf("delivery signing secret: %w", err)
		}
		if sink.SigningKey, err = delivery.ParseSigningSecret(s); err != nil {
			return nil, fmt.Errorf("delivery signing secret %s/%s: %w", ref.Name, ref.Key, err)
		}
	}
	return sink, nil
}

// secret is a Secret key a sink names: only a Secret the policy's writer vouched for, or
// one that opted in, since a sink must not carry a token its writer could not read.
func (a *Announcer) secret(ctx context.Context, pol *sessionsv1alpha1.SessionPolicy, ref *corev1.SecretKeySelector) (string, error) {
	v, err := secretaccess.Value(ctx, a.apiReader, pol, ref.Name, ref.Key)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(v)), nil
}

// recordOn delivers to the events sink kind: an AnnounceDelivered Event on the session.
func (a *Announcer) recordOn(session *sessionsv1alpha1.AgentSession, target string) func(delivery.Message) {
	return func(m delivery.Message) {
		if a.events != nil {
			a.events.Eventf(session, nil, corev1.EventTypeNormal, "AnnounceDelivered", "Deliver",
				"announce to %s: %s", target, textutil.Truncate(m.Text, maxAnnounceEventText))
		}
	}
}

// maxAnnounceEventText keeps an announce Event's note under the API's 1 KiB.
const maxAnnounceEventText = 900
