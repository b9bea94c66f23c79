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
	"net/http"
	"net/url"
)

// WhatsAppAPI is the Graph API origin of the WhatsApp Business Cloud API; WhatsAppVersion
// the Graph API version used when the sink names none.
const (
	WhatsAppAPI     = "https://graph.facebook.com"
	WhatsAppVersion = "v23.0"
)

// whatsapp posts with the Cloud API: POST {apiURL}/{version}/{phoneNumberId}/messages with
// a bearer token. Written here: Meta publishes no Go SDK for it, and the one call is a JSON
// POST. WhatsApp has no threads: a thread binding is the first message, which later parts
// quote (context.message_id).
type whatsapp struct {
	api, token, version, phoneNumberID string
	http                               *http.Client
}

type whatsappSend struct {
	MessagingProduct string           `json:"messaging_product"`
	RecipientType    string           `json:"recipient_type"`
	To               string           `json:"to"`
	Type             string           `json:"type"`
	Text             whatsappText     `json:"text"`
	Context          *whatsappContext `json:"context,omitempty"`
}

type whatsappText struct {
	Body       string `json:"body"`
	PreviewURL bool   `json:"preview_url"`
}

type whatsappContext struct {
	MessageID string `json:"message_id"`
}

type whatsappAnswer struct {
	Messages []struct {
		ID string `json:"id"`
	} `json:"messages"`
	Error *struct {
		Message string `json:"message"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// whatsappThrottled are the Graph API's rate-limit error codes, which come with a 400 as
// often as with a 429: retried like a 429.
var whatsappThrottled = map[int]bool{4: true, 80007: true, 130429: true, 131048: true, 131056: true}

func (w *whatsapp) Format() Format { return WhatsAppFormat }

func (w *whatsapp) Post(ctx context.Context, m ChatMessage) (Posted, error) {
	body := whatsappSend{MessagingProduct: "whatsapp", RecipientType: "individual", To: m.To, Type: "text",
		Text: whatsappText{Body: m.Text}}
	if m.Thread != "" {
		body.Context = &whatsappContext{MessageID: m.Thread}
	}
	version := w.version
	if version == "" {
		version = WhatsAppVersion
	}
	var answer whatsappAnswer
	code, header, err := postJSON(ctx, w.http, w.api+"/"+url.PathEscape(version)+"/"+url.PathEscape(w.phoneNumberID)+"/messages",
		http.Header{"Authorization": {"Bearer " + w.token}}, body, &answer)
	switch {
	case err != nil:
		return Posted{}, err
	case code >= 300 || answer.Error != nil:
		text := ""
		if e := answer.Error; e != nil {
			text = e.Message
			if whatsappThrottled[e.Code] {
				code = http.StatusTooManyRequests
			}
		}
		return Posted{}, statusError(code, text, retryAfterHeader(header))
	case len(answer.Messages) == 0 || answer.Messages[0].ID == "":
		return Posted{}, &PostError{Status: code, Text: "the answer names no message id"}
	}
	out := Posted{MessageID: answer.Messages[0].ID, Thread: m.Thread}
	if m.StartThread && m.Thread == "" {
		out.Thread = out.MessageID
	}
	return out, nil
}
