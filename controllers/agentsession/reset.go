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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"k8s.io/klog/v2"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// resetWhenAsked starts the session on a new transcript when its reset annotation (the
// sessions tool's reset) names its current sessionId: the old transcript is archived with
// its workspace, a new one is created under a new sessionId, and the counters, usage among
// them, are the new transcript's (they are always read from the transcript: setCounters).
// Each step is idempotent, so a reconcile that fails half way is repeated whole.
func (r *AgentSessionReconciler) resetWhenAsked(ctx context.Context, s *sessionsv1alpha1.AgentSession) error {
	old := resetAsked(s)
	if old == "" {
		return nil
	}
	if err := r.archive(ctx, s); err != nil {
		return err
	}
	id := nextSessionID(s.UID, old)
	stats, err := r.Store.CreateSession(ctx, transcript.SessionHeader{
		Namespace: s.Namespace, SessionID: id, SessionKey: s.Spec.Key, Name: s.Name,
		ParentSessionKey: s.Spec.ParentSessionKey, CreatedAt: r.now(),
	})
	if err != nil {
		return fmt.Errorf("create transcript: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("resetting session to a new transcript", "agentSession", klog.KObj(s), "from", old, "to", id)
	st := &s.Status
	st.SessionID, st.TranscriptPath = id, stats.Path
	st.LastMessagePreview, st.ContextTokens, st.SystemSent, st.AbortedLastRun = "", 0, false, false
	setCounters(st, stats)
	return nil
}

// resetAsked is the sessionId the session's reset annotation asks to leave: its current
// one, while it is not archived; "" when no reset is asked (or it is done).
func resetAsked(s *sessionsv1alpha1.AgentSession) string {
	old := s.Annotations[sessionsv1alpha1.ResetAnnotation]
	if old == "" || old != s.Status.SessionID || s.Status.Phase == sessionsv1alpha1.SessionArchived {
		return ""
	}
	return old
}

// nextSessionID is the sessionId a reset from old gives the session uid: UUID-shaped and
// derived, so a repeated reconcile creates the same transcript, not a second one.
func nextSessionID(uid types.UID, old string) string {
	sum := sha256.Sum256([]byte(string(uid) + "/reset/" + old))
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func (r *AgentSessionReconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}
