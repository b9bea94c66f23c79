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
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"time"
)

// DiscordAPI is Discord's public origin.
const DiscordAPI = "https://discord.com"

// discord posts with Discord's REST API v10 as a bot: POST
// {apiURL}/api/v10/channels/{channel.id}/messages with Authorization: Bot <token>, and
// starts a thread from a message with POST .../messages/{message.id}/threads.
//
// Written here, not with discordgo: discordgo's endpoints are package variables (one API
// origin for the whole process, so no per-sink apiURL without racing other sinks), and its
// REST client sleeps through 429s by itself, out of reach of the reconciler's clock, its
// attempt bound and the per-part records.
type discord struct {
	api, token string
	http       *http.Client
}

type discordSend struct {
	Content         string                 `json:"content"`
	AllowedMentions discordAllowedMentions `json:"allowed_mentions"`
	// Nonce with EnforceNonce makes Discord drop a second message with the same nonce
	// sent within a few minutes: the one platform-side guard against a repeated part.
	Nonce        string `json:"nonce,omitempty"`
	EnforceNonce bool   `json:"enforce_nonce,omitempty"`
}

// discordAllowedMentions with no parse list pings nobody, whatever the text says.
type discordAllowedMentions struct {
	Parse []string `json:"parse"`
}

type discordThread struct {
	Name string `json:"name"`
}

// discordAnswer is a message or thread channel, or an error (code, message, retry_after).
type discordAnswer struct {
	ID         string  `json:"id"`
	Code       int     `json:"code"`
	Message    string  `json:"message"`
	RetryAfter float64 `json:"retry_after"`
}

// discordUserAgent is the User-Agent Discord asks bots to send: DiscordBot ($url, $version).
const discordUserAgent = "DiscordBot (https://github.com/agent-sessions/agent-session-operator, v1alpha1)"

// discordNonceLen is the longest nonce Discord takes.
const discordNonceLen = 25

func discordNonce(key string) string {
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:discordNonceLen]
}

func (d *discord) Format() Format { return DiscordFormat }

func (d *discord) Post(ctx context.Context, m ChatMessage) (Posted, error) {
	channel := m.To
	if m.Thread != "" {
		channel = m.Thread
	}
	nonce := discordNonce(m.Key)
	msg, err := d.call(ctx, "/channels/"+url.PathEscape(channel)+"/messages",
		discordSend{Content: m.Text, AllowedMentions: discordAllowedMentions{Parse: []string{}}, Nonce: nonce, EnforceNonce: nonce != ""})
	if err != nil {
		return Posted{}, err
	}
	out := Posted{MessageID: msg.ID, Thread: m.Thread}
	if m.StartThread && m.Thread == "" {
		name := m.ThreadName
		if name == "" {
			name = "announce"
		}
		// The message is posted: a thread that cannot be made leaves later parts in the
		// channel rather than posting this one again.
		if th, err := d.call(ctx, "/channels/"+url.PathEscape(channel)+"/messages/"+url.PathEscape(msg.ID)+"/threads",
			discordThread{Name: truncateRunes(name, 100)}); err == nil {
			out.Thread = th.ID
		}
	}
	return out, nil
}

func (d *discord) call(ctx context.Context, path string, body any) (discordAnswer, error) {
	var answer discordAnswer
	code, header, err := postJSON(ctx, d.http, d.api+"/api/v10"+path,
		http.Header{"Authorization": {"Bot " + d.token}, "User-Agent": {discordUserAgent}}, body, &answer)
	switch {
	case err != nil:
		return answer, err
	case code >= 300:
		wait := time.Duration(answer.RetryAfter * float64(time.Second))
		if wait == 0 {
			wait = retryAfterHeader(header)
		}
		return answer, statusError(code, answer.Message, wait)
	case answer.ID == "":
		return answer, &PostError{Status: code, Text: "the answer names no id"}
	}
	return answer, nil
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}
