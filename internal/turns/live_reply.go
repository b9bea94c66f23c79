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

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// liveReplies is a Store that also publishes a running reply's pieces, unstored; the
// sidecar's client is one.
type liveReplies interface {
	LiveReply(namespace, sessionID, runID string, step int) transcript.ReplyWriter
}

// liveReply returns ctx with the model call's reply text sent, piece by piece, as
// session.delta events (best effort: a slow store drops pieces, never slows the turn), and
// the func that sends the rest once the call has returned. The run id is the turn's id, a
// send's runId.
func (e *Engine) liveReply(ctx context.Context, t *turn) (context.Context, func()) {
	lr, ok := e.opts.Store.(liveReplies)
	if !ok || !e.opts.LiveReplies || t.session == nil || t.session.Status.SessionID == "" {
		return ctx, func() {}
	}
	w := lr.LiveReply(t.req.Namespace, t.session.Status.SessionID, t.req.ID, t.step)
	return provider.WithTextDeltas(ctx, w.Write), w.Flush
}
