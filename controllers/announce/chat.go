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
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// Retries of a chat part wait chatBackoff, doubled per attempt up to chatMaxBackoff, unless
// the platform names its own wait (a 429's retry_after).
const (
	chatBackoff    = 500 * time.Millisecond
	chatMaxBackoff = time.Minute
)

// syntheticThreadPrefix starts the thread id a thread-bound run's child carries in its
// delivery context (threadOf): a name for webhook bridges, not a chat platform's thread.
const syntheticThreadPrefix = "subagent-"

// deliverChat posts the next part of an announce to a chat sink (telegram, discord,
// whatsapp, slack) and records it: one part per call, so a status write lands between two
// parts and a restarted manager goes on from the first part not recorded. A part is posted
// again only when the manager stops between the platform's answer and that write; Discord
// drops such a repeat by its nonce, the other platforms take no idempotency key.
func (a *Announcer) deliverChat(ctx context.Context, in Input, pol *sessionsv1alpha1.SessionPolicy, sink *sessionsv1alpha1.DeliverySink,
	dc sessionsv1alpha1.DeliveryContext, out *sessionsv1alpha1.Announce) (*sessionsv1alpha1.Announce, time.Duration) {
	session, kind := in.Session, string(sink.Kind)
	chatID := policy.ChatIDOf(session, dc)
	if chatID == "" {
		out.Status = sessionsv1alpha1.AnnounceFailed
		out.Reason = fmt.Sprintf("no %s chat id for session %s: set spec.deliveryContext.to or spec.lastTo (its key names no chat)",
			dc.Channel, session.Spec.Key)
		return out, 0
	}
	format, _ := delivery.FormatOf(kind)
	parts := format.Render(in.reply)
	if len(parts) == 0 {
		out.Status, out.Reason = sessionsv1alpha1.AnnounceSkipped, "the announce reply was empty"
		return out, 0
	}
	if p := in.Prev; p != nil && (p.Status == sessionsv1alpha1.AnnounceDelivering || p.Status == sessionsv1alpha1.AnnounceDelivered) {
		if p.NextAttemptAt != nil {
			// Woken early (the status write of the last attempt, a restart): not yet.
			if wait := p.NextAttemptAt.Sub(a.now()); wait > 0 {
				return p, wait
			}
		}
		out.DeliveredParts, out.Attempts, out.Thread, out.Error = p.DeliveredParts, p.Attempts, p.Thread, p.Error
	}
	thread, start := a.chatThread(ctx, in, dc, kind, out.Thread)
	out.Parts = int32(len(parts))
	out.Target = targetOf(dc.Channel, chatID, thread)
	next := len(out.DeliveredParts)
	if next >= len(parts) {
		out.Status = sessionsv1alpha1.AnnounceDelivered
		return out, 0
	}
	tok, err := a.secret(ctx, pol, sink.SecretRef)
	if err != nil {
		out.Status, out.Reason = sessionsv1alpha1.AnnounceFailed, "delivery token: "+err.Error()
		return out, 0
	}
	posted, err := a.deliverer.Post(ctx, chatSinkOf(sink, session.Namespace, tok), delivery.ChatMessage{
		To: chatID, Text: parts[next], Thread: thread, StartThread: start && next == 0,
		ThreadName: threadName(in.reply), Key: in.Key + "/part-" + strconv.Itoa(next),
	})
	var throttled *delivery.Throttled
	var failed *delivery.PostError
	switch {
	case errors.As(err, &throttled):
		out.Status, out.Reason = sessionsv1alpha1.AnnounceDelivering, fmt.Sprintf("part %d of %d waits for the sink's ratePerMinute", next+1, len(parts))
		return a.retryAt(out, throttled.Wait)
	case errors.As(err, &failed):
		out.Attempts++
		out.Error = failed.Text
		what := fmt.Sprintf("%s answered part %d of %d", kind, next+1, len(parts))
		if failed.Status != 0 {
			what += fmt.Sprintf(" with %d", failed.Status)
		}
		if !failed.Retry || int(out.Attempts) >= a.attempts() {
			out.Status = sessionsv1alpha1.AnnounceFailed
			out.Reason = fmt.Sprintf("%s after %d attempt%s: %s", what, out.Attempts, plural(int(out.Attempts)), failed.Text)
			return out, 0
		}
		out.Status, out.Reason = sessionsv1alpha1.AnnounceDelivering, fmt.Sprintf("%s (attempt %d of %d): %s", what, out.Attempts, a.attempts(), failed.Text)
		return a.retryAt(out, chatRetryWait(failed, out.Attempts))
	case err != nil:
		out.Status, out.Reason = sessionsv1alpha1.AnnounceFailed, err.Error()
		return out, 0
	}
	now := metav1.NewTime(a.now())
	out.DeliveredParts = append(append([]sessionsv1alpha1.DeliveredPart(nil), out.DeliveredParts...), sessionsv1alpha1.DeliveredPart{MessageID: posted.MessageID, At: &now})
	out.Attempts, out.Error = 0, ""
	if out.Thread == nil && posted.Thread != "" && (in.Bind || thread != "") {
		out.Thread = &sessionsv1alpha1.AnnounceThread{Channel: kind, ID: posted.Thread}
		out.Target = targetOf(dc.Channel, chatID, posted.Thread)
	}
	if len(out.DeliveredParts) < len(parts) {
		out.Status, out.Reason = sessionsv1alpha1.AnnounceDelivering, fmt.Sprintf("%d of %d parts delivered", len(out.DeliveredParts), len(parts))
		return out, 0
	}
	out.Status, out.Reason = sessionsv1alpha1.AnnounceDelivered, ""
	return out, 0
}

// chatSinkOf is a policy's chat sink in namespace, with its token: its rate limit is the
// namespace's channel's.
func chatSinkOf(sink *sessionsv1alpha1.DeliverySink, namespace, token string) delivery.ChatSink {
	cs := delivery.ChatSink{Kind: string(sink.Kind), Channel: string(sink.Channel), APIURL: sink.APIURL, Token: token,
		PhoneNumberID: sink.PhoneNumberID, APIVersion: sink.APIVersion, Key: namespace + "/" + string(sink.Channel)}
	if sink.RatePerMinute != nil {
		cs.RatePerMinute = int(*sink.RatePerMinute)
	}
	return cs
}

// retryAt records when the part is tried next, so that a reconcile woken before (by this
// very status write, or a restart) waits rather than posts.
func (a *Announcer) retryAt(out *sessionsv1alpha1.Announce, wait time.Duration) (*sessionsv1alpha1.Announce, time.Duration) {
	at := metav1.NewMicroTime(a.now().Add(wait))
	out.NextAttemptAt = &at
	return out, wait
}

// chatThread is the platform thread the next part goes into, and whether the first part
// starts one: the thread the announce is bound to already; else, for a thread-bound run,
// a new thread (or the chat's own thread, when the requester's context names one); else
// the thread of the session's context, or of the run a thread-bound child belongs to.
func (a *Announcer) chatThread(ctx context.Context, in Input, dc sessionsv1alpha1.DeliveryContext, kind string, bound *sessionsv1alpha1.AnnounceThread) (string, bool) {
	if bound != nil && bound.Channel == kind {
		return bound.ID, false
	}
	chatID := dc.ThreadID
	if strings.HasPrefix(chatID, syntheticThreadPrefix) {
		chatID = ""
	}
	switch {
	case in.Bind:
		return chatID, chatID == ""
	case chatID != "":
		return chatID, false
	case strings.HasPrefix(dc.ThreadID, syntheticThreadPrefix):
		if t := a.runThread(ctx, in.Session); t != nil && t.Channel == kind {
			return t.ID, false
		}
	}
	return "", false
}

// runThread is the thread binding of the thread-bound run a child session belongs to (its
// controller), nil when there is none yet.
func (a *Announcer) runThread(ctx context.Context, child *sessionsv1alpha1.AgentSession) *sessionsv1alpha1.AnnounceThread {
	owner := metav1.GetControllerOf(child)
	if owner == nil || owner.Kind != "SubagentRun" || a.apiReader == nil {
		return nil
	}
	run := &sessionsv1alpha1.SubagentRun{}
	if err := a.apiReader.Get(ctx, types.NamespacedName{Namespace: child.Namespace, Name: owner.Name}, run); err != nil || run.UID != owner.UID {
		return nil
	}
	if run.Status.Announce == nil {
		return nil
	}
	return run.Status.Announce.Thread
}

// threadName names a Discord thread after the announce's first line.
func threadName(reply string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(reply), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "announce"
	}
	return line
}

// chatRetryWait is the wait before attempt n+1 of a part: the platform's, else backoff.
func chatRetryWait(e *delivery.PostError, attempts int32) time.Duration {
	if e.RetryAfter > 0 {
		return e.RetryAfter
	}
	return min(chatBackoff<<min(attempts-1, 16), chatMaxBackoff)
}

func (a *Announcer) attempts() int {
	if a.deliverer.Attempts > 0 {
		return a.deliverer.Attempts
	}
	return delivery.DefaultAttempts
}

func (a *Announcer) now() time.Time {
	if a.clock == nil {
		return clock.RealClock{}.Now()
	}
	return a.clock.Now()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
