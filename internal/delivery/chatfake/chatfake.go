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

// Package chatfake is a local chat platform for tests, e2e runs and benchmarks: one HTTP
// server that speaks the documented endpoint of Telegram's sendMessage, Discord's channel
// messages and threads, the WhatsApp Cloud API's messages or Slack's chat.postMessage,
// checks paths, auth and bodies, keeps what it took, and answers scripted failures in the
// platform's own shapes (errors, 429s).
package chatfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// The platforms a Server speaks.
const (
	Telegram = "telegram"
	Discord  = "discord"
	WhatsApp = "whatsapp"
	Slack    = "slack"
)

// PhoneNumberID is the WhatsApp phone number id the server answers for.
const PhoneNumberID = "106540352242922"

// Server is one chat platform's API. Its zero value is not usable: use New.
type Server struct {
	kind, token string

	mu   sync.Mutex
	fail []Failure
	// skip is how many requests are taken before fail applies.
	skip   int
	got    []Message
	nextID int
	// requests counts every request, taken or not.
	requests int
	// first is called with each request as it arrives (a benchmark's first byte).
	first func()
}

// New is a server for platform kind that takes token.
func New(kind, token string) *Server { return &Server{kind: kind, token: token} }

// Fail scripts the answers of the next requests that would be taken.
func (f *Server) Fail(fs ...Failure) { f.FailAfter(0, fs...) }

// FailAfter scripts the answers of the requests that would be taken after the next n.
func (f *Server) FailAfter(n int, fs ...Failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.skip = n
	f.fail = append(f.fail, fs...)
}

// Requests counts the requests the server got.
func (f *Server) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// OnRequest calls fn as each request arrives, before its body is read.
func (f *Server) OnRequest(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.first = fn
}

// Failure is one scripted answer: a status, the platform's error text and, for a 429, the
// wait in seconds.
type Failure struct {
	Status int
	Text   string
	Wait   int
}

// Message is one message the platform took.
type Message struct {
	To, Text, Thread, ID string
}

// Messages are the messages the server took, in order.
func (f *Server) Messages() []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Message(nil), f.got...)
}

// ServeHTTP implements http.Handler.
func (f *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	first := f.first
	f.mu.Unlock()
	if first != nil {
		first()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if r.Method != http.MethodPost {
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	switch f.kind {
	case Telegram:
		f.telegram(w, r, body)
	case Discord:
		f.discord(w, r, body)
	case WhatsApp:
		f.whatsapp(w, r, body)
	case Slack:
		f.slack(w, r, body)
	}
}

func (f *Server) scripted() (Failure, bool) {
	if len(f.fail) == 0 {
		return Failure{}, false
	}
	if f.skip > 0 {
		f.skip--
		return Failure{}, false
	}
	x := f.fail[0]
	f.fail = f.fail[1:]
	return x, true
}

func (f *Server) id() string {
	f.nextID++
	return strconv.Itoa(1000 + f.nextID)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// telegram: POST /bot<token>/sendMessage; errors {"ok":false,"error_code","description",
// "parameters":{"retry_after"}}.
func (f *Server) telegram(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Path != "/bot"+f.token+"/sendMessage" {
		writeJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error_code": 404, "description": "Not Found"})
		return
	}
	var m struct {
		ChatID          string `json:"chat_id"`
		Text            string `json:"text"`
		MessageThreadID int64  `json:"message_thread_id"`
		ReplyParameters *struct {
			MessageID int64 `json:"message_id"`
		} `json:"reply_parameters"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.ChatID == "" || m.Text == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: message text is empty"})
		return
	}
	if x, ok := f.scripted(); ok {
		answer := map[string]any{"ok": false, "error_code": x.Status, "description": x.Text}
		if x.Status == http.StatusTooManyRequests {
			answer["parameters"] = map[string]any{"retry_after": x.Wait}
		}
		writeJSON(w, x.Status, answer)
		return
	}
	thread := ""
	switch {
	case m.MessageThreadID != 0:
		thread = strconv.FormatInt(m.MessageThreadID, 10)
	case m.ReplyParameters != nil:
		thread = "reply:" + strconv.FormatInt(m.ReplyParameters.MessageID, 10)
	}
	id := f.id()
	f.got = append(f.got, Message{To: m.ChatID, Text: m.Text, Thread: thread, ID: id})
	n, _ := strconv.Atoi(id)
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"message_id": n, "date": 1, "chat": map[string]any{"id": 1}, "text": m.Text}})
}

// discord: POST /api/v10/channels/{id}/messages (and .../messages/{id}/threads) with
// Authorization: Bot <token>; errors {"message","code"}, 429 {"message","retry_after","global"}.
func (f *Server) discord(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Header.Get("Authorization") != "Bot "+f.token {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "401: Unauthorized", "code": 0})
		return
	}
	if !strings.HasPrefix(r.Header.Get("User-Agent"), "DiscordBot (") {
		writeJSON(w, http.StatusForbidden, map[string]any{"message": "a bot's User-Agent is DiscordBot ($url, $version)", "code": 0})
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/v10/channels/")
	parts := strings.Split(rest, "/")
	switch {
	case ok && len(parts) == 4 && parts[1] == "messages" && parts[3] == "threads":
		for i := range f.got {
			if f.got[i].ID == parts[2] {
				writeJSON(w, http.StatusCreated, map[string]any{"id": "thread-" + parts[2], "type": 11})
				return
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Unknown Message", "code": 10008})
		return
	case ok && len(parts) == 2 && parts[1] == "messages":
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "404: Not Found", "code": 0})
		return
	}
	var m struct {
		Content         string `json:"content"`
		AllowedMentions *struct {
			Parse []string `json:"parse"`
		} `json:"allowed_mentions"`
		Nonce string `json:"nonce"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.Content == "" || m.AllowedMentions == nil || len(m.AllowedMentions.Parse) != 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Invalid Form Body", "code": 50035})
		return
	}
	if x, ok := f.scripted(); ok {
		answer := map[string]any{"message": x.Text, "code": 0}
		if x.Status == http.StatusTooManyRequests {
			answer["retry_after"] = float64(x.Wait)
			answer["global"] = false
			w.Header().Set("Retry-After", strconv.Itoa(x.Wait))
		}
		writeJSON(w, x.Status, answer)
		return
	}
	to, thread := parts[0], ""
	if strings.HasPrefix(to, "thread-") {
		thread = to
	}
	id := f.id()
	f.got = append(f.got, Message{To: to, Text: m.Content, Thread: thread, ID: id})
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "channel_id": to, "content": m.Content})
}

// whatsapp: POST /{version}/{phoneNumberId}/messages with a bearer token; errors
// {"error":{"message","type","code","fbtrace_id"}}.
func (f *Server) whatsapp(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "Invalid OAuth access token.", "type": "OAuthException", "code": 190}})
		return
	}
	if r.URL.Path != "/v23.0/"+PhoneNumberID+"/messages" {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "Unknown path", "code": 100}})
		return
	}
	var m struct {
		MessagingProduct string `json:"messaging_product"`
		To               string `json:"to"`
		Type             string `json:"type"`
		Text             struct {
			Body string `json:"body"`
		} `json:"text"`
		Context *struct {
			MessageID string `json:"message_id"`
		} `json:"context"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.MessagingProduct != "whatsapp" || m.Type != "text" || m.Text.Body == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "(#100) Invalid parameter", "code": 100}})
		return
	}
	if x, ok := f.scripted(); ok {
		code := 131000
		if x.Status == http.StatusTooManyRequests {
			code = 130429
		}
		writeJSON(w, x.Status, map[string]any{"error": map[string]any{"message": x.Text, "type": "OAuthException", "code": code, "fbtrace_id": "A1"}})
		return
	}
	thread := ""
	if m.Context != nil {
		thread = m.Context.MessageID
	}
	id := "wamid." + f.id()
	f.got = append(f.got, Message{To: m.To, Text: m.Text.Body, Thread: thread, ID: id})
	writeJSON(w, http.StatusOK, map[string]any{"messaging_product": "whatsapp", "contacts": []any{map[string]any{"input": m.To, "wa_id": m.To}},
		"messages": []any{map[string]any{"id": id}}})
}

// slack: POST /api/chat.postMessage, the token as a bearer header or the token argument;
// errors {"ok":false,"error"} with 200, 429 with Retry-After.
func (f *Server) slack(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Path != "/api/chat.postMessage" {
		writeJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "unknown_method"})
		return
	}
	var channel, text, threadTS, token string
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m struct{ Channel, Text, ThreadTS string }
		_ = json.Unmarshal(body, &m)
		channel, text, threadTS = m.Channel, m.Text, m.ThreadTS
	} else {
		v, _ := url.ParseQuery(string(body))
		channel, text, threadTS, token = v.Get("channel"), v.Get("text"), v.Get("thread_ts"), v.Get("token")
	}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		token = auth
	}
	if token != f.token {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	if channel == "" || text == "" {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "no_text"})
		return
	}
	if x, ok := f.scripted(); ok {
		if x.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.Itoa(x.Wait))
			writeJSON(w, x.Status, map[string]any{"ok": false, "error": "ratelimited"})
			return
		}
		if x.Status >= 500 {
			w.WriteHeader(x.Status)
			_, _ = fmt.Fprint(w, "<html>upstream error</html>")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": x.Text})
		return
	}
	ts := "1700000000." + f.id()
	f.got = append(f.got, Message{To: channel, Text: text, Thread: threadTS, ID: ts})
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": channel, "ts": ts, "message": map[string]any{"text": text, "ts": ts}})
}
