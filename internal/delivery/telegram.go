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
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// TelegramAPI is the Bot API's public origin.
const TelegramAPI = "https://api.telegram.org"

// telegram posts with the Bot API's sendMessage: POST {apiURL}/bot<token>/sendMessage.
//
// The answer is decoded with telegram-bot-api's own types (APIResponse, Message,
// ResponseParameters). The request is written here: the library's MakeRequest (v5.5.1, its
// newest) takes no context, so a reconcile could not give up on a slow API, drops the
// HTTP status (a proxy's 502 page becomes a JSON error), and its configs predate forum
// topics (message_thread_id) and reply_parameters.
type telegram struct {
	api, token string
	http       *http.Client
}

// A Telegram thread binding is a forum topic ("<message_thread_id>") or the first message
// that later parts answer ("reply:<message_id>").
const telegramReplyPrefix = "reply:"

type telegramSend struct {
	ChatID          string              `json:"chat_id"`
	Text            string              `json:"text"`
	MessageThreadID int64               `json:"message_thread_id,omitempty"`
	ReplyParameters *telegramReplyTo    `json:"reply_parameters,omitempty"`
	LinkPreview     telegramLinkPreview `json:"link_preview_options"`
}

type telegramReplyTo struct {
	MessageID                int64 `json:"message_id"`
	AllowSendingWithoutReply bool  `json:"allow_sending_without_reply"`
}

type telegramLinkPreview struct {
	IsDisabled bool `json:"is_disabled"`
}

func (t *telegram) Format() Format { return TelegramFormat }

func (t *telegram) Post(ctx context.Context, m ChatMessage) (Posted, error) {
	body := telegramSend{ChatID: m.To, Text: m.Text, LinkPreview: telegramLinkPreview{IsDisabled: true}}
	switch id, isReply := strings.CutPrefix(m.Thread, telegramReplyPrefix); {
	case m.Thread == "":
	case isReply:
		n, _ := strconv.ParseInt(id, 10, 64)
		body.ReplyParameters = &telegramReplyTo{MessageID: n, AllowSendingWithoutReply: true}
	default:
		body.MessageThreadID, _ = strconv.ParseInt(m.Thread, 10, 64)
	}
	var answer tgbotapi.APIResponse
	code, _, err := postJSON(ctx, t.http, t.api+"/bot"+t.token+"/sendMessage", nil, body, &answer)
	if err != nil {
		return Posted{}, err
	}
	if !answer.Ok {
		var wait time.Duration
		if p := answer.Parameters; p != nil {
			wait = time.Duration(p.RetryAfter) * time.Second
		}
		if answer.ErrorCode != 0 {
			code = answer.ErrorCode
		}
		return Posted{}, statusError(code, answer.Description, wait)
	}
	var msg tgbotapi.Message
	if err := json.Unmarshal(answer.Result, &msg); err != nil {
		return Posted{}, &PostError{Status: code, Text: "sendMessage answered ok without a message: " + err.Error()}
	}
	out := Posted{MessageID: strconv.Itoa(msg.MessageID), Thread: m.Thread}
	if m.StartThread && m.Thread == "" {
		out.Thread = telegramReplyPrefix + out.MessageID
	}
	return out, nil
}
