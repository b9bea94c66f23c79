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
	"errors"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// maxEventError bounds the error a turn's Warning Event quotes (a note holds 1 KiB).
const maxEventError = 512

// end is a turn's end, run or dropped, in one place: it is recorded (metrics, an Event when
// it failed), its owner keeps the outcome and is woken (finish), then its session's report
// follows (reportTurn).
func (e *Engine) end(j *job, t *turn) {
	e.record(j.ctx, t)
	e.finish(j, t.res)
	e.reportTurn(t)
}

// record counts a finished turn, and says in an Event on its session when it failed.
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
