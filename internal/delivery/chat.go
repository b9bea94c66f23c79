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

package delivery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// Chat is one chat platform's API, behind which telegram.go, discord.go, whatsapp.go and
// slack.go each post one message.
type Chat interface {
	// Format is how the platform shows text.
	Format() Format
	// Post sends one message. A *PostError says whether to try again.
	Post(ctx context.Context, m ChatMessage) (Posted, error)
}

// ChatMessage is one part of an announce, formatted for its platform.
type ChatMessage struct {
	// To is the chat: Telegram chat id, Discord channel id, WhatsApp phone number, Slack
	// channel id.
	To string
	// Text is the part, already escaped (Format.Render).
	Text string
	// Thread is the thread the message goes into, as Posted.Thread named it ("" = the chat).
	Thread string
	// StartThread asks that this message start the thread later parts go into (a
	// thread-bound run's first message); Posted.Thread then names it.
	StartThread bool
	// ThreadName names a Discord thread.
	ThreadName string
	// Key is the part's idempotency key (Discord's nonce; a header elsewhere).
	Key string
}

// Posted is what the platform made of a message.
type Posted struct {
	// MessageID is the platform's message id.
	MessageID string
	// Thread is the thread the message started (StartThread) or went into.
	Thread string
}

// PostError is a message the platform did not take. Text is the platform's own error text
// (bounded, without the token); Retry says a later attempt may work (a network error, a
// 5xx, a 429), after RetryAfter when the platform named a wait.
type PostError struct {
	Status     int
	Text       string
	Retry      bool
	RetryAfter time.Duration
}

func (e *PostError) Error() string {
	if e.Status == 0 {
		return e.Text
	}
	return fmt.Sprintf("%d: %s", e.Status, e.Text)
}

// maxPlatformText bounds a platform's error text kept in status.
const maxPlatformText = 300

// maxRetryAfter caps a platform's Retry-After: a longer wait is a platform problem that a
// person should see.
const maxRetryAfter = 10 * time.Minute

// statusError is the PostError of an HTTP answer: 429 and 5xx are retried, other 4xx are
// final; text is the platform's error text.
func statusError(code int, text string, retryAfter time.Duration) *PostError {
	if strings.TrimSpace(text) == "" {
		text = http.StatusText(code)
	}
	return &PostError{Status: code, Text: text, Retry: code == http.StatusTooManyRequests || code >= 500,
		RetryAfter: min(max(retryAfter, 0), maxRetryAfter)}
}

// networkError is a request that got no answer: retried unless the egress policy refused it.
func networkError(err error) *PostError {
	return &PostError{Text: err.Error(), Retry: !egress.IsRefused(err)}
}

// cleanText makes a platform's text fit for status: the token out, control characters
// out, bounded.
func cleanText(s, token string) string {
	if token != "" {
		s = strings.ReplaceAll(s, token, "[token]")
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return textutil.Truncate(strings.TrimSpace(s), maxPlatformText)
}

// redacted is err as a PostError whose text holds no token (a URL with the token in it, as
// Telegram's are, is in every net/http error).
func redacted(err error, token string) *PostError {
	var pe *PostError
	if !errors.As(err, &pe) {
		pe = networkError(err)
	}
	out := *pe
	out.Text = cleanText(out.Text, token)
	return &out
}
