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
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// observeRetries returns ctx with a provider retry observer that shows a slow model call on
// the session: an Event per retry and, through the session's report, the ModelRetrying
// condition (True while the call retries, False once it ended), so a hung endpoint is
// visible instead of a silent Running.
// maxRetryCause bounds the model error the ModelRetrying condition's message quotes.
const maxRetryCause = 300

func (e *Engine) observeRetries(ctx context.Context, t *turn) context.Context {
	if t.session == nil {
		return ctx
	}
	return provider.WithRetryObserver(ctx, func(r provider.Retry) { e.noteRetry(t.session, t.req.ID, r) })
}

func (e *Engine) noteRetry(s *sessionsv1alpha1.AgentSession, turnID string, r provider.Retry) {
	cond := retryCondition(r, turnID, s.Generation)
	if rec := e.opts.Recorder; rec != nil {
		kind := corev1.EventTypeWarning
		if cond.Status == metav1.ConditionFalse && r.Err == nil {
			kind = corev1.EventTypeNormal
		}
		rec.Eventf(s, nil, kind, sessionsv1alpha1.ConditionModelRetrying, "ModelCall", "%s", cond.Message)
	}
	// Reported, not written: the AgentSession controller sets it in the session's status.
	e.report(client.ObjectKeyFromObject(s), func(rep *SessionReport) { rep.Retry = &cond })
}

// retryCondition is the ModelRetrying condition a retry report sets.
func retryCondition(r provider.Retry, turnID string, generation int64) metav1.Condition {
	c := metav1.Condition{Type: sessionsv1alpha1.ConditionModelRetrying, ObservedGeneration: generation}
	cause := ""
	if r.Err != nil {
		cause = ": " + textutil.Truncate(r.Err.Error(), maxRetryCause)
	}
	switch {
	case !r.Done:
		c.Status, c.Reason = metav1.ConditionTrue, reasonOf(r.Class)
		c.Message = fmt.Sprintf("turn %s: model call attempt %d in %s after %s%s", turnID, r.Attempt, r.Wait.Round(1e6), classText(r), cause)
	case r.Err == nil:
		c.Status, c.Reason = metav1.ConditionFalse, "Recovered"
		c.Message = fmt.Sprintf("turn %s: model call succeeded on attempt %d", turnID, r.Attempt)
	default:
		c.Status, c.Reason = metav1.ConditionFalse, "RetriesExhausted"
		c.Message = fmt.Sprintf("turn %s: model call failed on attempt %d%s", turnID, r.Attempt, cause)
	}
	return c
}

func classText(r provider.Retry) string {
	if r.StatusCode != 0 {
		return fmt.Sprintf("%s (HTTP %d)", r.Class, r.StatusCode)
	}
	return r.Class
}

// reasonOf turns an error class (rate_limited) into a condition reason (RateLimited).
func reasonOf(class string) string {
	var b strings.Builder
	for _, part := range strings.Split(class, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	if b.Len() == 0 {
		return "Retrying"
	}
	return b.String()
}
