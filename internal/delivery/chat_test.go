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
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/delivery/chatfake"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
)

const testToken = "123456:AAF-secret-bot-token"

// chatTo is the chat each platform's tests post to.
var chatTo = map[string]string{KindTelegram: "-1001234", KindDiscord: "998877", KindWhatsApp: "15551234567", KindSlack: "C0123"}

// startPlatform serves a fake platform and a Deliverer allowed to reach it.
func startPlatform(t *testing.T, kind string) (*chatfake.Server, *Deliverer, ChatSink) {
	t.Helper()
	f := chatfake.New(kind, testToken)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	allow, err := egress.Parse([]string{srv.URL}, false)
	if err != nil {
		t.Fatal(err)
	}
	sink := ChatSink{Kind: kind, Channel: kind, APIURL: srv.URL, Token: testToken, Key: "ns/" + kind}
	if kind == KindWhatsApp {
		sink.PhoneNumberID = chatfake.PhoneNumberID
	}
	return f, New(allow), sink
}

func post(t *testing.T, d *Deliverer, s ChatSink, m ChatMessage) (Posted, error) {
	t.Helper()
	if m.To == "" {
		m.To = chatTo[s.Kind]
	}
	return d.Post(context.Background(), s, m)
}

// Each platform takes a message on its documented endpoint, with its auth, to the chat.
func TestChatDelivered(t *testing.T) {
	for _, kind := range []string{KindTelegram, KindDiscord, KindWhatsApp, KindSlack} {
		t.Run(kind, func(t *testing.T) {
			f, d, s := startPlatform(t, kind)
			format, _ := FormatOf(kind)
			text := format.Render("Status: ok\nResult: done")[0]
			posted, err := post(t, d, s, ChatMessage{Text: text, Key: "uid/announce/part-0"})
			if err != nil {
				t.Fatalf("Post: %v", err)
			}
			want := []chatfake.Message{{To: chatTo[kind], Text: text, ID: posted.MessageID}}
			if diff := cmp.Diff(want, f.Messages()); diff != "" {
				t.Errorf("the platform took (-want +got):\n%s", diff)
			}
		})
	}
}

// A long announce is split at the platform's limit into numbered parts, posted in order.
func TestChatSplit(t *testing.T) {
	for _, kind := range []string{KindTelegram, KindDiscord, KindWhatsApp, KindSlack} {
		t.Run(kind, func(t *testing.T) {
			f, d, s := startPlatform(t, kind)
			format, _ := FormatOf(kind)
			text := "Status: ok\nResult: " + strings.Repeat("word ", format.Limit/2)
			parts := format.Render(text)
			if len(parts) != 3 {
				t.Fatalf("%d parts, want 3", len(parts))
			}
			for i, p := range parts {
				if _, err := post(t, d, s, ChatMessage{Text: p}); err != nil {
					t.Fatalf("part %d: %v", i, err)
				}
			}
			got := f.Messages()
			if len(got) != 3 {
				t.Fatalf("the platform took %d messages, want 3", len(got))
			}
			for i, m := range got {
				if !strings.HasPrefix(m.Text, fmt.Sprintf("(%d/3) ", i+1)) || units(m.Text) > format.Limit {
					t.Errorf("part %d: %d units, starts %q", i, units(m.Text), m.Text[:10])
				}
			}
		})
	}
}

// A thread-bound announce starts a thread with its first message and posts the rest in it.
func TestChatThreadBound(t *testing.T) {
	cases := map[string]func(first Posted) string{
		KindTelegram: func(p Posted) string { return "reply:" + p.MessageID },
		KindDiscord:  func(p Posted) string { return "thread-" + p.MessageID },
		KindWhatsApp: func(p Posted) string { return p.MessageID },
		KindSlack:    func(p Posted) string { return p.MessageID },
	}
	for kind, wantThread := range cases {
		t.Run(kind, func(t *testing.T) {
			f, d, s := startPlatform(t, kind)
			first, err := post(t, d, s, ChatMessage{Text: "(1/2) first", StartThread: true, ThreadName: "Status: ok"})
			if err != nil {
				t.Fatal(err)
			}
			if first.Thread != wantThread(first) {
				t.Fatalf("thread = %q, want %q", first.Thread, wantThread(first))
			}
			second, err := post(t, d, s, ChatMessage{Text: "(2/2) second", Thread: first.Thread})
			if err != nil {
				t.Fatal(err)
			}
			got := f.Messages()
			if len(got) != 2 || got[0].Thread != "" || got[1].Thread != first.Thread || second.Thread != first.Thread {
				t.Errorf("messages %+v, want the second in thread %q", got, first.Thread)
			}
		})
	}
}

// A 429 is retried after the platform's own wait, in its own shape (Telegram's
// parameters.retry_after, Discord's retry_after, Slack's Retry-After header; WhatsApp's
// throttling code names none).
func TestChatRateLimited(t *testing.T) {
	cases := map[string]time.Duration{KindTelegram: 3 * time.Second, KindDiscord: 2 * time.Second, KindWhatsApp: 0, KindSlack: 4 * time.Second}
	for kind, wantWait := range cases {
		t.Run(kind, func(t *testing.T) {
			f, d, s := startPlatform(t, kind)
			f.Fail(chatfake.Failure{Status: http.StatusTooManyRequests, Text: "Too Many Requests: retry later", Wait: int(wantWait / time.Second)})
			_, err := post(t, d, s, ChatMessage{Text: "hi"})
			var pe *PostError
			if !errors.As(err, &pe) || !pe.Retry || pe.RetryAfter != wantWait {
				t.Fatalf("err = %#v, want a retry after %s", err, wantWait)
			}
			if _, err := post(t, d, s, ChatMessage{Text: "hi"}); err != nil || len(f.Messages()) != 1 {
				t.Fatalf("the attempt after the wait: %v, %d messages", err, len(f.Messages()))
			}
		})
	}
}

// A 4xx fails at once with the platform's own text, which never holds the token.
func TestChatClientErrorIsFinal(t *testing.T) {
	cases := map[string]struct {
		fail chatfake.Failure
		want PostError
	}{
		KindTelegram: {chatfake.Failure{Status: 400, Text: "Bad Request: chat not found"}, PostError{Status: 400, Text: "Bad Request: chat not found"}},
		KindDiscord:  {chatfake.Failure{Status: 403, Text: "Missing Access"}, PostError{Status: 403, Text: "Missing Access"}},
		KindWhatsApp: {chatfake.Failure{Status: 400, Text: "(#131030) Recipient phone number not in allowed list"}, PostError{Status: 400, Text: "(#131030) Recipient phone number not in allowed list"}},
		KindSlack:    {chatfake.Failure{Status: 200, Text: "channel_not_found"}, PostError{Text: "channel_not_found"}},
	}
	for kind, tc := range cases {
		t.Run(kind, func(t *testing.T) {
			f, d, s := startPlatform(t, kind)
			f.Fail(tc.fail)
			_, err := post(t, d, s, ChatMessage{Text: "hi"})
			var pe *PostError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a PostError", err)
			}
			if diff := cmp.Diff(tc.want, *pe); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "secret-bot") {
				t.Errorf("the token is in the error: %v", err)
			}
		})
	}
}

// A request that gets no answer is retried; its error (net/http's, which quotes the URL,
// and so Telegram's token) holds no token. A wrong token is the platform's 401 text.
func TestChatTokenNeverInErrors(t *testing.T) {
	for _, kind := range []string{KindTelegram, KindDiscord, KindWhatsApp, KindSlack} {
		t.Run(kind, func(t *testing.T) {
			_, d, s := startPlatform(t, kind)
			srv := httptest.NewServer(http.NotFoundHandler())
			s.APIURL = srv.URL
			srv.Close()
			allow, _ := egress.Parse([]string{srv.URL}, false)
			d.HTTP = New(allow).HTTP
			_, err := post(t, d, s, ChatMessage{Text: "hi"})
			var pe *PostError
			if !errors.As(err, &pe) || !pe.Retry {
				t.Fatalf("err = %v, want a retryable PostError", err)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("the token is in the error: %v", err)
			}
		})
	}
}

// A 5xx is retried; the next attempt is delivered.
func TestChatServerErrorIsRetried(t *testing.T) {
	for _, kind := range []string{KindTelegram, KindDiscord, KindWhatsApp, KindSlack} {
		t.Run(kind, func(t *testing.T) {
			f, d, s := startPlatform(t, kind)
			f.Fail(chatfake.Failure{Status: http.StatusBadGateway, Text: "Bad Gateway"})
			_, err := post(t, d, s, ChatMessage{Text: "hi"})
			var pe *PostError
			if !errors.As(err, &pe) || !pe.Retry || pe.Status != http.StatusBadGateway {
				t.Fatalf("err = %#v, want a retryable 502", err)
			}
			if _, err := post(t, d, s, ChatMessage{Text: "hi"}); err != nil || len(f.Messages()) != 1 {
				t.Fatalf("retry: %v, %d messages", err, len(f.Messages()))
			}
		})
	}
}

// The sink's ratePerMinute holds a part back (nothing is sent) once its burst is spent.
func TestChatRatePerMinute(t *testing.T) {
	f, d, s := startPlatform(t, KindSlack)
	s.RatePerMinute = 2
	for i := range 2 {
		if _, err := post(t, d, s, ChatMessage{Text: "hi"}); err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
	}
	_, err := post(t, d, s, ChatMessage{Text: "hi"})
	var th *Throttled
	if !errors.As(err, &th) || th.Wait <= 0 || th.Wait > 30*time.Second {
		t.Fatalf("err = %v, want a wait of up to 30s", err)
	}
	if f.Requests() != 2 {
		t.Errorf("the platform got %d requests, want 2", f.Requests())
	}
}

// An answer larger than the bound is an error, not a read without end.
func TestChatAnswerIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true,"channel":"C1","ts":"1.1","x":"`))
		chunk := strings.Repeat("a", 64<<10)
		for range 64 {
			if _, err := w.Write([]byte(chunk)); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	allow, _ := egress.Parse([]string{srv.URL}, false)
	for _, kind := range []string{KindTelegram, KindSlack} {
		_, err := New(allow).Post(context.Background(), ChatSink{Kind: kind, APIURL: srv.URL, Token: testToken, Key: kind}, ChatMessage{To: "C1", Text: "hi"})
		if err == nil || !strings.Contains(err.Error(), "read limit of 1 MiB") {
			t.Errorf("%s: err = %v, want the bound", kind, err)
		}
	}
}

// A chat sink's apiURL obeys the egress policy like every other URL: a loopback API is
// refused at once (not retried) unless --egress-allow names it, and nothing is sent.
func TestChatAPIURLObeysEgress(t *testing.T) {
	f, _, s := startPlatform(t, KindTelegram)
	_, err := New(nil).Post(context.Background(), s, ChatMessage{To: "-1", Text: "hi"})
	var pe *PostError
	if !errors.As(err, &pe) || pe.Retry || !strings.Contains(pe.Text, "loopback") || strings.Contains(pe.Text, testToken) {
		t.Fatalf("err = %v, want a final loopback refusal without the token", err)
	}
	if f.Requests() != 0 {
		t.Fatalf("the platform got %d requests", f.Requests())
	}
}
