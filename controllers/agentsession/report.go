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

package agentsession

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// applyReport puts what the turn engine reports of the session's turns into its status:
// the ModelRetrying condition (the engine's is authoritative, whatever the cache holds), the
// last turn's abort mark and context size, and, after a turn ended, the counters read from
// the transcript (so the newest turn's messages are counted, however many were coalesced).
func (r *AgentSessionReconciler) applyReport(ctx context.Context, s *sessionsv1alpha1.AgentSession, rep turns.SessionReport) error {
	if rep.Retry != nil {
		meta.SetStatusCondition(&s.Status.Conditions, *rep.Retry)
	}
	if !rep.TurnEnded {
		return nil
	}
	s.Status.AbortedLastRun = rep.AbortedLastRun
	s.Status.ActiveRunID = ""
	if rep.ContextTokens > 0 {
		s.Status.ContextTokens, s.Status.SystemSent = rep.ContextTokens, true
	}
	if s.Status.SessionID == "" {
		return nil
	}
	stats, err := r.Store.Stats(ctx, s.Namespace, s.Status.SessionID)
	if errors.Is(err, transcript.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	setCounters(&s.Status, stats)
	return nil
}

// setCounters copies a transcript's counters into the session's status.
func setCounters(st *sessionsv1alpha1.AgentSessionStatus, stats transcript.Stats) {
	st.InputTokens, st.OutputTokens, st.TotalTokens = stats.InputTokens, stats.OutputTokens, stats.TotalTokens
	st.MessageCount = stats.MessageCount
	u := sessionUsage(stats)
	st.Usage = &u
	if stats.LastPreview != "" {
		st.LastMessagePreview = stats.LastPreview
	}
	if !stats.UpdatedAt.IsZero() {
		st.UpdatedAt = &metav1.Time{Time: stats.UpdatedAt}
	}
	if stats.Compactions > 0 {
		st.Compactions = stats.Compactions
		st.LastCompactedAt = &metav1.Time{Time: stats.LastCompactedAt}
	}
}

// sessionUsage is a session's status.usage: its transcript's counters, which hold every
// turn's priced usage, so the total is exact after a restart and stays when the session is
// archived (the status is then no longer rewritten).
func sessionUsage(st transcript.Stats) sessionsv1alpha1.Usage {
	u := sessionsv1alpha1.Usage{InputTokens: st.InputTokens, OutputTokens: st.OutputTokens, CachedInputTokens: st.CachedInputTokens,
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
