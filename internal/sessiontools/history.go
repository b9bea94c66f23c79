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

package sessiontools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// sessions_history bounds.
const (
	DefaultHistoryLimit = 50
	MaxHistoryLimit     = transcript.MaxLimit
)

type historyArgs struct {
	SessionKey   string `json:"sessionKey"`
	Limit        Number `json:"limit"`
	IncludeTools bool   `json:"includeTools"`
	// Cursor opens the page before a message: a sessions_search hit's cursor, or the
	// nextCursor of the page after.
	Cursor string `json:"cursor"`
}

func historyTool() Tool {
	return Tool{Name: "sessions_history",
		Description: "Fetch the transcript of one session (a session key or a sessionId from sessions_list), archived ones too. Credential-like text is masked (contentRedacted); truncated says older messages were left out.",
		Schema: Schema(map[string]any{
			"sessionKey":   map[string]any{"type": "string", "description": "session key, sessionId, or main"},
			"limit":        map[string]any{"type": "number", "description": "max messages (default 50, at most 1000)"},
			"includeTools": map[string]any{"type": "boolean", "description": "include tool results (default false)"},
			"cursor":       map[string]any{"type": "string", "description": "page before this point: a sessions_search hit's cursor, or nextCursor (default: the newest messages)"},
		}, "sessionKey"),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a historyArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			if a.SessionKey == "" {
				return nil, errors.New("sessionKey is required")
			}
			before, err := transcript.ParseCursor(a.Cursor)
			if err != nil {
				return nil, err
			}
			return c.history(ctx, a.SessionKey, transcript.ReadOptions{Limit: int(Clamp(a.Limit.Or(DefaultHistoryLimit), 1, MaxHistoryLimit)),
				IncludeTools: a.IncludeTools, BeforeSeq: before})
		}}
}

func (c *Call) history(ctx context.Context, ref string, o transcript.ReadOptions) (any, error) {
	target, err := c.visibleOrRetired(ctx, ref)
	if err != nil {
		return nil, err
	}
	if target.Status.SessionID == "" {
		return nil, fmt.Errorf("session %q has no transcript yet", target.Spec.Key)
	}
	page, err := c.readSession(ctx, target, o)
	if err != nil {
		return nil, err
	}
	msgs, redacted := redactRecords(page.Messages)
	return HistoryResult{SessionKey: target.Spec.Key, SessionID: target.Status.SessionID, Messages: msgs,
		HasMore: page.HasMore, NextCursor: page.NextCursor, Truncated: page.HasMore, ContentRedacted: redacted}, nil
}

// HistoryResult is the sessions_history result: the page, with truncated when older messages
// were left out and contentRedacted when credential-like text was masked.
type HistoryResult struct {
	SessionKey      string              `json:"sessionKey"`
	SessionID       string              `json:"sessionId"`
	Messages        []transcript.Record `json:"messages"`
	HasMore         bool                `json:"hasMore"`
	NextCursor      string              `json:"nextCursor,omitempty"`
	Truncated       bool                `json:"truncated"`
	ContentRedacted bool                `json:"contentRedacted"`
}
