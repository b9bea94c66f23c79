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

package turns

import (
	"context"
	"encoding/json"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// record reports a finished turn: metrics and an Event when it failed. Its session's
// counters go to the status throttle later (offerStatus), once the owner is woken.
// maxEventError bounds the error a turn's Warning Event quotes (a note holds 1 KiB).
const maxEventError = 512

func (e *Engine) record(ctx context.Context, t *turn) {
	res := &t.res
	agent := ""
	if t.session != nil {
		agent = t.session.Spec.AgentID
	}
	outcome := outcomeOK
	switch {
	case errors.Is(res.Err, ErrDeadline):
		outcome = outcomeTimeout
	case res.Aborted:
		outcome = outcomeAborted
	case res.Err != nil:
		outcome = outcomeError
	}
	turnsTotal.WithLabelValues(agent, outcome).Inc()
	turnDuration.WithLabelValues(agent).Observe(res.Finished.Sub(res.Started).Seconds())

	// A turn cut by the manager's shutdown has not failed (it runs again after the restart).
	if t.session == nil || errors.Is(res.Err, ErrShutdown) {
		return
	}
	if res.Err != nil {
		ctrl.LoggerFrom(ctx).V(2).Info("turn failed", "turn", t.req.ID, "session", t.req.SessionKey,
			"namespace", t.req.Namespace, "outcome", outcome, "error", res.Err.Error())
		if r := e.opts.Recorder; r != nil {
			reason := "TurnFailed"
			if res.Aborted {
				reason = "TurnAborted"
			}
			r.Eventf(t.session, nil, corev1.EventTypeWarning, reason, "Turn", "turn %s: %s", t.req.ID, textutil.Truncate(res.Err.Error(), maxEventError))
		}
	}
}

// offerStatus hands a finished turn's session counters to the status throttle. It runs
// after the owner is woken: the throttle writes at once when the session's interval is
// over (a transcript read and an API write), and the owner's outcome does not wait for it.
func (e *Engine) offerStatus(t *turn) {
	// A turn cut by the manager's shutdown is submitted again after the restart; it has not
	// failed, so the session is left as it is.
	if t.session == nil || errors.Is(t.res.Err, ErrShutdown) {
		return
	}
	e.status.offer(client.ObjectKeyFromObject(t.session), statusUpdate{session: t.session, aborted: t.res.Aborted, lastInput: t.lastInput})
}

// statusUpdate is what a finished turn tells its session's status; the transcript's
// counters are read when it is written, so a coalesced write carries the newest.
type statusUpdate struct {
	session   *v1.AgentSession
	aborted   bool
	lastInput int64
}

// writeStatus is the throttle's write: a failure is logged, the next turn writes again.
func (e *Engine) writeStatus(u statusUpdate) {
	ctx, cancel := context.WithTimeout(context.Background(), statusWriteTimeout)
	defer cancel()
	if err := e.patchStatus(ctx, u); err != nil && !apierrors.IsNotFound(err) {
		ctrl.Log.WithName("agent-runtime").Error(err, "updating session status after turn",
			"session", u.session.Spec.Key, "namespace", u.session.Namespace)
	}
}

// patchStatus writes the session's counters in one merge patch of the status subresource.
func (e *Engine) patchStatus(ctx context.Context, u statusUpdate) error {
	st := map[string]any{
		"abortedLastRun": u.aborted,
		"activeRunId":    nil,
	}
	if u.lastInput > 0 {
		st["contextTokens"] = u.lastInput
		st["systemSent"] = true
	}
	if id := u.session.Status.SessionID; id != "" {
		stats, err := e.opts.Store.Stats(ctx, u.session.Namespace, id)
		if err != nil && !errors.Is(err, transcript.ErrNotFound) {
			return err
		}
		if err == nil {
			st["inputTokens"] = stats.InputTokens
			st["outputTokens"] = stats.OutputTokens
			st["totalTokens"] = stats.TotalTokens
			st["messageCount"] = stats.MessageCount
			st["usage"] = sessionUsage(stats)
			if stats.LastPreview != "" {
				st["lastMessagePreview"] = stats.LastPreview
			}
			if !stats.UpdatedAt.IsZero() {
				st["updatedAt"] = metav1.NewTime(stats.UpdatedAt)
			}
		}
	}
	body, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return err
	}
	obj := u.session.DeepCopy()
	return e.opts.Client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, body))
}

// sessionUsage is a session's status.usage: its transcript's counters, which hold every
// turn's priced usage, so the total is exact after a restart and stays when the session is
// archived (the status is then no longer rewritten).
func sessionUsage(st transcript.Stats) v1.Usage {
	u := v1.Usage{InputTokens: st.InputTokens, OutputTokens: st.OutputTokens, CachedInputTokens: st.CachedInputTokens,
		Turns: st.Turns, Currency: st.Currency}
	switch st.Currency {
	case "":
	case transcript.MixedCurrency:
		u.Cost = usage.Mixed
	default:
		u.Cost = usage.FormatNanos(st.CostNanos)
	}
	return u
}
