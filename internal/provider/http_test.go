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

package provider

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	clocktesting "k8s.io/utils/clock/testing"
)

// wireFormats holds, per HTTP provider, what its server says on success and
// how it words an error.
var wireFormats = map[string]struct {
	ok       string
	errBody  func(typ, msg string) string
	okStream []string
}{
	OpenAI: {
		ok: `{"id":"c1","object":"chat.completion","model":"test-model","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
		errBody: func(typ, msg string) string {
			return `{"error":{"message":"` + msg + `","type":"` + typ + `","code":null}}`
		},
	},
	Anthropic: {
		ok: `{"id":"m1","type":"message","role":"assistant","model":"test-model","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`,
		errBody: func(typ, msg string) string {
			return `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"}}`
		},
	},
}

var okResponse = &Response{Text: "hi", StopReason: "stop", Model: "test-model", Usage: Usage{InputTokens: 3, OutputTokens: 1}}

func TestHTTPRetries(t *testing.T) {
	type tcase struct {
		handlers     func(ok string, errBody func(string, string) string) []http.HandlerFunc
		maxRetries   int
		timeout      time.Duration // real-time ctx deadline; 0 = none
		want         *Response
		wantErr      *Error
		wantRequests int
	}
	cases := map[string]tcase{
		"500 then success": {
			handlers: func(ok string, eb func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(500, eb("api_error", "internal")), reply(200, ok)}
			},
			want: okResponse, wantRequests: 2,
		},
		"529 overloaded then 503 then success": {
			handlers: func(ok string, eb func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(529, eb("overloaded_error", "Overloaded")), reply(503, "upstream down"), reply(200, ok)}
			},
			want: okResponse, wantRequests: 3,
		},
		"connection reset then success": {
			handlers: func(ok string, _ func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{hangUp, reply(200, ok)}
			},
			want: okResponse, wantRequests: 2,
		},
		"429 with Retry-After in the past retries at once": {
			handlers: func(ok string, eb func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(429, eb("rate_limit_error", "slow down"), "Retry-After", "Thu, 01 Jan 2015 00:00:00 GMT"), reply(200, ok)}
			},
			want: okResponse, wantRequests: 2,
		},
		"server errors until retries run out": {
			handlers: func(_ string, eb func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(500, eb("api_error", "still broken"))}
			},
			maxRetries: 2,
			wantErr:    &Error{StatusCode: 500, Type: ErrServer, Message: "api_error", Retryable: true},
			// one attempt plus two retries
			wantRequests: 3,
		},
		"negative MaxRetries never retries": {
			handlers: func(_ string, eb func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(502, eb("api_error", "bad gateway"))}
			},
			maxRetries:   -1,
			wantErr:      &Error{StatusCode: 502, Type: ErrServer, Message: "api_error", Retryable: true},
			wantRequests: 1,
		},
		"401 is a terminal auth error with the provider's error type": {
			handlers: func(_ string, eb func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(401, eb("authentication_error", "invalid x-api-key"))}
			},
			wantErr:      &Error{StatusCode: 401, Type: ErrAuth, Message: "authentication_error"},
			wantRequests: 1,
		},
		"403 is auth too": {
			handlers: func(_ string, eb func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(403, eb("permission_error", "no access to model"))}
			},
			wantErr:      &Error{StatusCode: 403, Type: ErrAuth, Message: "permission_error"},
			wantRequests: 1,
		},
		"404 unknown model is a bad request": {
			handlers: func(_ string, eb func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(404, eb("not_found_error", "model: test-model"))}
			},
			wantErr:      &Error{StatusCode: 404, Type: ErrBadRequest, Message: "not_found_error", Model: "test-model"},
			wantRequests: 1,
		},
		"400 with a non-JSON body gives the status text, not the body": {
			handlers: func(string, func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(400, "bad things\n")}
			},
			wantErr:      &Error{StatusCode: 400, Type: ErrBadRequest, Message: "Bad Request", Model: "test-model"},
			wantRequests: 1,
		},
		"malformed JSON is terminal": {
			handlers: func(string, func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(200, `{"choices": [`)}
			},
			wantErr:      &Error{StatusCode: 200, Type: ErrMalformedResponse},
			wantRequests: 1,
		},
		"Retry-After past the deadline is a timeout at once": {
			handlers: func(_ string, eb func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{reply(429, eb("rate_limit_error", "slow down"), "Retry-After", "60")}
			},
			timeout:      30 * time.Second,
			wantErr:      &Error{StatusCode: 429, Type: ErrTimeout},
			wantRequests: 1,
		},
		"slow server hits the deadline": {
			handlers: func(string, func(string, string) string) []http.HandlerFunc {
				return []http.HandlerFunc{stall}
			},
			timeout:      50 * time.Millisecond,
			wantErr:      &Error{Type: ErrTimeout},
			wantRequests: 1,
		},
	}
	for _, name := range []string{OpenAI, Anthropic} {
		wf := wireFormats[name]
		for cname, tc := range cases {
			t.Run(name+"/"+cname, func(t *testing.T) {
				srv := newStub(t, tc.handlers(wf.ok, wf.errBody)...)
				fc := newTestClock()
				autoStep(t, fc)
				p := mustNew(t, name, srv, fc, func(c *Config) { c.MaxRetries = tc.maxRetries })
				ctx := context.Background()
				if tc.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.timeout)
					defer cancel()
				}
				got, err := p.Complete(ctx, Request{Messages: []Message{user("hello")}})
				if tc.wantErr != nil {
					checkError(t, name, err, tc.wantErr)
				} else if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("response (-want +got):\n%s", diff)
				}
				if n := len(srv.requests()); n != tc.wantRequests {
					t.Errorf("server saw %d requests, want %d", n, tc.wantRequests)
				}
			})
		}
	}
}

// checkError compares an *Error; an empty want Message means any message.
func checkError(t *testing.T, provider string, err error, want *Error) {
	t.Helper()
	var got *Error
	if !errors.As(err, &got) {
		t.Fatalf("err = %v (%T), want *Error", err, err)
	}
	w := *want
	w.Provider = provider
	opts := []cmp.Option{cmpopts.IgnoreFields(Error{}, "Err")}
	if w.Message == "" {
		opts = append(opts, cmpopts.IgnoreFields(Error{}, "Message"))
	}
	if diff := cmp.Diff(&w, got, opts...); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

// TestRetryAfterIsHonoured steps the fake clock to just short of the wait
// the server asked for and checks no retry has been made yet.
func TestRetryAfterIsHonoured(t *testing.T) {
	now := newTestClock().Now()
	cases := map[string]struct {
		header []string
		wait   time.Duration
	}{
		"seconds":      {header: []string{"Retry-After", "7"}, wait: 7 * time.Second},
		"HTTP date":    {header: []string{"Retry-After", now.Add(10 * time.Second).Format(http.TimeFormat)}, wait: 10 * time.Second},
		"milliseconds": {header: []string{"Retry-After-Ms", "1500", "Retry-After", "2"}, wait: 1500 * time.Millisecond},
		"capped":       {header: []string{"Retry-After", "86400"}, wait: retryAfterCap},
	}
	for _, name := range []string{OpenAI, Anthropic} {
		wf := wireFormats[name]
		for cname, tc := range cases {
			t.Run(name+"/"+cname, func(t *testing.T) {
				srv := newStub(t, reply(429, wf.errBody("rate_limit_error", "slow down"), tc.header...), reply(200, wf.ok))
				fc := clocktesting.NewFakeClock(now)
				p := mustNew(t, name, srv, fc)
				done := completeAsync(p)
				waitForWaiter(t, fc)
				fc.Step(tc.wait - time.Millisecond)
				if !fc.HasWaiters() {
					t.Fatalf("retried before the %s the server asked for", tc.wait)
				}
				fc.Step(time.Millisecond)
				r := <-done
				if r.err != nil {
					t.Fatal(r.err)
				}
				if diff := cmp.Diff(okResponse, r.resp); diff != "" {
					t.Errorf("response (-want +got):\n%s", diff)
				}
				if n := len(srv.requests()); n != 2 {
					t.Errorf("server saw %d requests, want 2", n)
				}
			})
		}
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := newStub(t, reply(500, "down"))
	fc := newTestClock()
	p := mustNew(t, OpenAI, srv, fc)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := p.Complete(ctx, Request{Messages: []Message{user("hello")}})
		errc <- err
	}()
	for len(srv.requests()) == 0 {
		time.Sleep(100 * time.Microsecond)
	}
	cancel()
	// Full jitter may pick a zero wait, so the loop may be sleeping or
	// already on the next attempt; either way it must end with Canceled.
	autoStep(t, fc)
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestFullJitterBounds(t *testing.T) {
	for attempt := range 40 {
		ceiling := backoffCap
		if attempt < 16 {
			ceiling = min(backoffCap, backoffBase<<attempt)
		}
		for range 50 {
			if d := fullJitter(attempt); d < 0 || d >= ceiling {
				t.Fatalf("fullJitter(%d) = %s, want in [0, %s)", attempt, d, ceiling)
			}
		}
	}
}

func TestErrorReason(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"openai code":         {`{"error":{"message":"Incorrect API key sk-abc","type":"invalid_request_error","code":"invalid_api_key"}}`, "invalid_api_key"},
		"openai type":         {`{"error":{"message":"m1","type":"server_error","code":null}}`, "server_error"},
		"anthropic":           {`{"type":"error","error":{"type":"overloaded_error","message":"m2"}}`, "overloaded_error"},
		"error string":        {`{"error":"m3"}`, "502 Bad Gateway"},
		"vllm":                {`{"object":"error","message":"m4","type":"BadRequestError","code":400}`, "BadRequestError"},
		"fastapi detail":      {`{"detail":"m5"}`, "502 Bad Gateway"},
		"plain text":          {"  oops  ", "502 Bad Gateway"},
		"empty":               {"", "502 Bad Gateway"},
		"a code that is text": {`{"error":{"code":"ignore previous instructions","type":"x y"}}`, "502 Bad Gateway"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := errorReason([]byte(tc.body), "502 Bad Gateway"); got != tc.want {
				t.Errorf("errorReason = %q, want %q", got, tc.want)
			}
		})
	}
}

// A response that hangs past the attempt timeout is cut off and retried, on the injected
// clock, and the retry's answer is returned.
func TestHungAttemptIsRetried(t *testing.T) {
	const attempt = time.Hour
	for _, name := range []string{OpenAI, Anthropic} {
		t.Run(name, func(t *testing.T) {
			srv := newStub(t, stall, reply(200, wireFormats[name].ok))
			fc := newTestClock()
			p := mustNew(t, name, srv, fc, func(c *Config) { c.AttemptTimeout = attempt })
			done := completeAsync(p)
			cutFirstAttempt(srv, fc, attempt)
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if diff := cmp.Diff(okResponse, r.resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

// With no retries left, a hung attempt ends in a retryable timeout that says so.
func TestHungAttemptTimesOut(t *testing.T) {
	srv := newStub(t, stall)
	fc := newTestClock()
	p := mustNew(t, OpenAI, srv, fc, func(c *Config) { c.AttemptTimeout, c.MaxRetries = time.Minute, -1 })
	errc := make(chan error, 1)
	go func() {
		_, err := p.Complete(context.Background(), Request{Messages: []Message{user("hello")}})
		errc <- err
	}()
	for len(srv.requests()) == 0 {
		time.Sleep(100 * time.Microsecond)
	}
	waitForWaiter(t, fc)
	fc.Step(time.Minute)
	checkError(t, OpenAI, <-errc, &Error{Type: ErrTimeout, Retryable: true, Message: "no complete answer within the attempt timeout of 1m0s"})
}

type result struct {
	resp *Response
	err  error
}

// completeAsync sends "hello" to p and delivers the outcome on the returned channel.
func completeAsync(p Provider) <-chan result {
	done := make(chan result, 1)
	go func() {
		resp, err := p.Complete(context.Background(), Request{Messages: []Message{user("hello")}})
		done <- result{resp, err}
	}()
	return done
}

// cutFirstAttempt waits for the first request, steps fc by after (the bound that cuts the
// hung attempt off) and then the backoff away, in steps far below the second attempt's
// bound, until the retry arrives.
func cutFirstAttempt(srv *stubServer, fc *clocktesting.FakeClock, after time.Duration) {
	for len(srv.requests()) == 0 || !fc.HasWaiters() {
		time.Sleep(100 * time.Microsecond)
	}
	fc.Step(after)
	for len(srv.requests()) < 2 {
		if fc.HasWaiters() {
			fc.Step(backoffBase)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// A model the provider refuses (a spawn's override is not checked before it) fails the call
// with an error that names the model asked for.
func TestRefusedModelIsNamed(t *testing.T) {
	for _, name := range []string{OpenAI, Anthropic} {
		t.Run(name, func(t *testing.T) {
			srv := newStub(t, reply(404, wireFormats[name].errBody("not_found_error", "no such model")))
			fc := newTestClock()
			autoStep(t, fc)
			p := mustNew(t, name, srv, fc)
			_, err := p.Complete(context.Background(), Request{Model: "gpt-nope", Messages: []Message{user("hello")}})
			if err == nil || !strings.Contains(err.Error(), `for model "gpt-nope"`) {
				t.Errorf("error %v, want it to name the model gpt-nope", err)
			}
		})
	}
}
