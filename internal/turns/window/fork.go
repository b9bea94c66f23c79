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

package window

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// ForkMessages bounds how many of the requester's latest messages a forked child starts from.
const ForkMessages = 50

// ForkSource is the session a forked turn copies the recent conversation of.
type ForkSource struct {
	SessionKey string
	SessionID  string
}

// readFork reads the conversation a forked turn starts from: the source's latest
// ForkMessages user and assistant messages, their text only (tool calls without their
// results would be refused by providers, and tool results are the source's to show). A
// turn whose records are already written (a repeat) reuses them instead (queueFork).
func (w *Window) readFork(ctx context.Context) error {
	src := w.req.ForkFrom
	if src == nil {
		return nil
	}
	page, err := w.src.store.Read(ctx, w.req.Namespace, src.SessionID, transcript.ReadOptions{Limit: ForkMessages})
	if err != nil {
		return fmt.Errorf("reading the transcript to fork from %s: %w", src.SessionKey, err)
	}
	prov := &transcript.Provenance{Kind: transcript.ProvenanceInterSession, SourceSessionKey: src.SessionKey, SourceTool: "sessions_spawn"}
	for _, r := range page.Messages {
		m := transcript.Message{Role: r.Message.Role, Provenance: prov}
		for _, b := range r.Message.Content {
			if b.Type == transcript.BlockText && b.Text != "" {
				m.Content = append(m.Content, b)
			}
		}
		if len(m.Content) > 0 {
			w.forked = append(w.forked, m)
		}
	}
	return nil
}

// queueFork queues the forked conversation as the turn's first records (keys <ID>/fork/<i>)
// and returns it as history after the session's (sequence numbers following its last), so
// the model reads it before the input. A repeated turn uses the records it wrote the first
// time, whatever the source holds now.
func (w *Window) queueFork(history []transcript.Record) []transcript.Record {
	key := func(i int) string { return w.req.Turn + "/fork/" + strconv.Itoa(i) }
	msgs := w.forked
	if _, repeat := w.Done[key(0)]; repeat {
		msgs = nil
		for i := 0; ; i++ {
			r, ok := w.Done[key(i)]
			if !ok {
				break
			}
			msgs = append(msgs, r.Message)
		}
	} else {
		for i, m := range msgs {
			w.Queue = append(w.Queue, transcript.AppendRequest{IdempotencyKey: key(i), Message: m})
		}
	}
	var last int64
	if n := len(history); n > 0 {
		last = history[n-1].Seq
	}
	out := make([]transcript.Record, len(msgs))
	for i := range msgs {
		out[i] = transcript.Record{Seq: last + 1 + int64(i), Message: msgs[i]}
	}
	return out
}
