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

package transcript

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// MaxReplyBytes bounds a whole reply as the doors return it (sessions_send's reply, an A2A
// task's artifact, an MCP task's result) and as the next step reads it (a ping-pong turn's
// input, the announce inputs, a sub-agent's announced Result): a model answer's own cap
// (provider.MaxOutputText), 32 times the preview a status keeps.
const MaxReplyBytes = 256 << 10

// Reader reads pages of a transcript: the Store, its client, or the sidecar's local store.
type Reader interface {
	Read(ctx context.Context, namespace, sessionID string, opts ReadOptions) (Page, error)
}

// MessageText joins a message's text blocks as the model wrote them.
func MessageText(m *Message) string {
	if len(m.Content) == 1 && m.Content[0].Type == BlockText {
		return m.Content[0].Text
	}
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// TextAt is the text of record seq of a session's transcript, cut to MaxReplyBytes: the
// whole reply a status keeps only the start of.
func TextAt(ctx context.Context, r Reader, namespace, sessionID string, seq int64) (string, error) {
	page, err := r.Read(ctx, namespace, sessionID, ReadOptions{AfterSeq: seq - 1, BeforeSeq: seq + 1, Limit: 1, IncludeTools: true})
	if err != nil {
		return "", err
	}
	if len(page.Messages) == 0 || page.Messages[0].Seq != seq {
		return "", fmt.Errorf("%w: no message %d in transcript %s/%s", ErrNotFound, seq, namespace, sessionID)
	}
	return textutil.Truncate(MessageText(&page.Messages[0].Message), MaxReplyBytes), nil
}
