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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/egress"
)

// Retry policy shared by the HTTP providers. The loop is written here rather
// than taken from a backoff library: the usual choice (cenkalti/backoff v5)
// cannot take an injected k8s clock, and neither it nor wait.Backoff does
// full jitter together with Retry-After and a ctx-deadline check.
const (
	defaultMaxRetries = 4
	backoffBase       = 500 * time.Millisecond
	backoffCap        = 30 * time.Second
	// retryAfterCap bounds how long a server may ask us to stay away.
	retryAfterCap = 2 * time.Minute

	// DefaultAttemptTimeout is long enough for a slow, large completion.
	DefaultAttemptTimeout = 5 * time.Minute
	// DefaultIdleTimeout is how long an attempt may go without a byte from the server,
	// before the first byte as well as between two: a non-streamed answer arrives whole, so
	// this bounds how long a model may think in silence.
	DefaultIdleTimeout = 90 * time.Second

	maxErrorBody = 64 << 10
	// MaxResponseBody bounds a model's answer, streamed or not: far above what any real
	// completion sends (a 128k-token reply is about 512 KiB of JSON), far below what a
	// hostile base URL could make the manager hold.
	MaxResponseBody = 4 << 20
)

// defaultHTTPClient obeys the default egress policy (no loopback, link-local or
// unspecified addresses) and follows no redirect. It has no overall timeout because streams
// may run long; the caller's ctx, the attempt and the idle bounds limit a call.
var defaultHTTPClient = (*egress.Policy)(nil).Client(egress.ClientOptions{})

// endpoint is what the HTTP providers share: where to post, the fixed
// headers (auth, version, content negotiation) and one retrying transport.
type endpoint struct {
	cfg    Config
	url    string
	header http.Header
	t      *httpTransport
}

func newEndpoint(cfg Config, defaultBase, path string, header http.Header) endpoint {
	base := cfg.BaseURL
	if base == "" {
		base = defaultBase
	}
	header.Set("Content-Type", "application/json")
	if cfg.Stream {
		header.Set("Accept", "text/event-stream")
	}
	return endpoint{cfg: cfg, url: strings.TrimRight(base, "/") + path, header: header, t: newHTTPTransport(cfg)}
}

// complete posts wire, the provider's request body, and decodes the answer
// in the format Config.Stream selected.
func (e *endpoint) complete(ctx context.Context, req Request, wire any, decode decodeFunc, decodeStream streamDecoder) (*Response, error) {
	body, err := json.Marshal(wire)
	if err != nil {
		return nil, &Error{Provider: e.cfg.Provider, Type: ErrBadRequest, Message: err.Error(), Err: err}
	}
	if e.cfg.Stream {
		onText := textDeltasFrom(ctx)
		whole := decode
		decode = func(body io.Reader) (*Response, error) {
			// An OpenAI-compatible server that ignores "stream": true answers one JSON object;
			// read that whole rather than fail a turn over the wire format.
			br := bufio.NewReader(body)
			if startsJSONObject(br) {
				return whole(br)
			}
			return decodeStream(br, onText)
		}
	}
	resp, err := e.t.call(ctx, e.url, e.header, body, decode)
	var perr *Error
	if errors.As(err, &perr) && perr.Type == ErrBadRequest && perr.StatusCode >= 400 && perr.StatusCode < 500 {
		perr.Model = e.model(req)
	}
	if err != nil {
		return nil, err
	}
	if resp.Model == "" {
		resp.Model = e.model(req)
	}
	capOutput(resp)
	return resp, nil
}

// startsJSONObject says the body's first byte after white space is '{' (a whole JSON
// answer; an event stream starts with a field name or ':').
func startsJSONObject(br *bufio.Reader) bool {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return false
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.ReadByte()
		default:
			return b[0] == '{'
		}
	}
}

// model is the model a request asks for: its own, else the configured one.
func (e *endpoint) model(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return e.cfg.Model
}

// httpTransport posts JSON to a provider and retries what is worth retrying.
type httpTransport struct {
	provider   string
	client     *http.Client
	clock      clock.WithTicker
	maxRetries int
	attempt    time.Duration // bound of one attempt; <= 0 none
	idle       time.Duration // bound of silence within an attempt; <= 0 none
}

// errAttemptTimeout is the cause an attempt is cancelled with when it ran out of time.
var errAttemptTimeout = errors.New("attempt timeout")

// errIdleTimeout is the cause an attempt is cancelled with when the server went silent.
var errIdleTimeout = errors.New("idle timeout")

func newHTTPTransport(cfg Config) *httpTransport {
	t := &httpTransport{provider: cfg.Provider, client: cfg.HTTPClient, clock: cfg.Clock, maxRetries: cfg.MaxRetries,
		attempt: cfg.AttemptTimeout, idle: cfg.IdleTimeout}
	if t.attempt == 0 {
		t.attempt = DefaultAttemptTimeout
	}
	if t.idle == 0 {
		t.idle = DefaultIdleTimeout
	}
	if t.client == nil {
		t.client = defaultHTTPClient
	}
	switch {
	case t.maxRetries == 0:
		t.maxRetries = defaultMaxRetries
	case t.maxRetries < 0:
		t.maxRetries = 0
	}
	return t
}

// decodeFunc turns a 2xx response body into a Response. It returns an *Error
// for bad content; any other error is taken as a broken connection.
type decodeFunc func(body io.Reader) (*Response, error)

// call posts body to url and decodes the answer, retrying rate limits, server
// errors and broken connections with exponential backoff and full jitter.
func (t *httpTransport) call(ctx context.Context, url string, header http.Header, body []byte, decode decodeFunc) (*Response, error) {
	observe := retryObserverFrom(ctx)
	for attempt := 0; ; attempt++ {
		resp, wait, err := t.once(ctx, url, header, body, decode)
		if err == nil {
			if attempt > 0 {
				observe(Retry{Provider: t.provider, Attempt: attempt + 1, Done: true})
			}
			return resp, nil
		}
		var perr *Error
		if !errors.As(err, &perr) || !perr.Retryable || attempt >= t.maxRetries {
			if attempt > 0 {
				observe(Retry{Provider: t.provider, Attempt: attempt + 1, Done: true, Err: err})
			}
			return nil, err
		}
		if wait < 0 {
			wait = fullJitter(attempt)
		}
		observe(Retry{Provider: t.provider, Attempt: attempt + 2, Class: perr.Type, StatusCode: perr.StatusCode, Wait: wait, Err: err})
		if err := t.sleep(ctx, wait, perr); err != nil {
			return nil, err
		}
	}
}

// once makes one attempt, cut off (retryably) when it outlives the attempt timeout, or when
// the server sends nothing for the idle timeout, both on the injected clock. wait is what
// the server asked us to wait before the next one, or -1.
func (t *httpTransport) once(ctx context.Context, url string, header http.Header, body []byte, decode decodeFunc) (*Response, time.Duration, error) {
	if t.attempt <= 0 && t.idle <= 0 {
		return t.try(ctx, url, header, body, decode, nil)
	}
	actx, cancel := context.WithCancelCause(ctx)
	w := startWatchdog(t.clock, t.attempt, t.idle, cancel)
	defer func() {
		w.stop()
		cancel(nil)
	}()
	resp, wait, err := t.try(actx, url, header, body, decode, w.touch)
	if err != nil && ctx.Err() == nil {
		switch cause := context.Cause(actx); {
		case errors.Is(cause, errAttemptTimeout):
			return nil, -1, &Error{Provider: t.provider, Type: ErrTimeout, Retryable: true, Err: err,
				Message: fmt.Sprintf("no complete answer within the attempt timeout of %s", t.attempt)}
		case errors.Is(cause, errIdleTimeout):
			return nil, -1, &Error{Provider: t.provider, Type: ErrTimeout, Retryable: true, Err: err,
				Message: fmt.Sprintf("no data from the server for %s", t.idle)}
		}
	}
	return resp, wait, err
}

// try makes one attempt without a bound of its own.
// progress, when set, is called whenever response bytes arrive.
func (t *httpTransport) try(ctx context.Context, url string, header http.Header, body []byte, decode decodeFunc, progress func()) (*Response, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, -1, &Error{Provider: t.provider, Type: ErrBadRequest, Message: err.Error(), Err: err}
	}
	req.Header = header.Clone()
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, -1, t.transportError(ctx, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if progress != nil {
		progress() // the headers are the first bytes
	}
	rbody := &boundedBody{r: resp.Body, left: MaxResponseBody, progress: progress}

	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		out, err := decode(rbody)
		if err == nil {
			return out, -1, nil
		}
		var perr *Error
		if !errors.As(err, &perr) {
			err = t.transportError(ctx, err) // the body broke off
			if !errors.As(err, &perr) {
				return nil, -1, err
			}
		}
		perr.Provider, perr.StatusCode = t.provider, resp.StatusCode
		return nil, -1, perr
	}

	raw, _ := io.ReadAll(io.LimitReader(rbody, maxErrorBody))
	perr := &Error{Provider: t.provider, StatusCode: resp.StatusCode, Message: errorReason(raw, statusText(resp.StatusCode))}
	wait := time.Duration(-1)
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		perr.Type, perr.Retryable = ErrRateLimited, true
		wait = retryAfter(resp.Header, t.clock.Now())
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		perr.Type = ErrAuth
	case code == http.StatusRequestTimeout:
		perr.Type, perr.Retryable = ErrTimeout, true
	case code >= 500: // includes Anthropic's 529 overloaded
		perr.Type, perr.Retryable = ErrServer, true
		wait = retryAfter(resp.Header, t.clock.Now())
	case code >= 300 && code < 400: // redirects are never followed with credentials
		perr.Type, perr.Message = ErrBadRequest, "redirect not followed"
	default: // 404 unknown model, 400 invalid request, 413, 422...
		perr.Type = ErrBadRequest
	}
	return nil, wait, perr
}

// transportError classifies a failure to get (or finish reading) a response.
func (t *httpTransport) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctxError(ctx, t.provider, "")
	}
	var refused *egress.Error
	if errors.As(err, &refused) {
		return &Error{Provider: t.provider, Type: ErrEgress, Message: refused.Error(), Err: err}
	}
	var perr *Error
	if errors.As(err, &perr) {
		return perr // e.g. a body over MaxResponseBody
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return &Error{Provider: t.provider, Type: ErrTimeout, Message: err.Error(), Retryable: true, Err: err}
	}
	return &Error{Provider: t.provider, Type: ErrConnection, Message: err.Error(), Retryable: true, Err: err}
}

// ctxError reports a done ctx: a passed deadline is a timeout Error,
// cancellation is returned as context.Canceled for the caller to recognise.
func ctxError(ctx context.Context, provider, last string) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", provider, ctx.Err())
	}
	msg := "deadline exceeded"
	if last != "" {
		msg += " after: " + last
	}
	return &Error{Provider: provider, Type: ErrTimeout, Message: msg, Err: ctx.Err()}
}

// sleep waits d on the injected clock. It refuses to start a wait the ctx
// deadline would cut short, so a caller gets a timeout at once instead of
// after a pointless sleep.
func (t *httpTransport) sleep(ctx context.Context, d time.Duration, last *Error) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return &Error{
			Provider:   t.provider,
			StatusCode: last.StatusCode,
			Type:       ErrTimeout,
			Message:    fmt.Sprintf("deadline leaves no time to retry after %s; last error: %s", d, last.Message),
			Err:        context.DeadlineExceeded,
		}
	}
	if err := ctx.Err(); err != nil {
		return ctxError(ctx, t.provider, last.Message)
	}
	if d <= 0 {
		return nil
	}
	timer := t.clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctxError(ctx, t.provider, last.Message)
	case <-timer.C():
		return nil
	}
}

// fullJitter is a random wait in [0, min(cap, base*2^attempt)) (AWS "full
// jitter"), which spreads out clients that failed together.
func fullJitter(attempt int) time.Duration {
	ceiling := backoffCap
	if attempt < 16 {
		ceiling = min(backoffCap, backoffBase<<attempt)
	}
	return rand.N(ceiling)
}

// retryAfter reads how long the server asked us to wait (retry-after-ms as
// sent by OpenAI, or Retry-After in seconds or as an HTTP date), capped; -1
// when it did not say.
func retryAfter(h http.Header, now time.Time) time.Duration {
	d := time.Duration(-1)
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d < 0 && v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
			d = time.Duration(secs * float64(time.Second))
		} else if at, err := http.ParseTime(v); err == nil {
			d = max(at.Sub(now), 0)
		}
	}
	return min(d, retryAfterCap)
}

// errorReason is a short, sanitized reason for an error answer: an identifier the server
// gave (its error code or type, as OpenAI, Anthropic, vLLM and LiteLLM send them, e.g.
// "invalid_api_key" or "overloaded_error"), else the HTTP status text. The server's own
// text is never copied: it lands in status and Events that namespace users read, and a
// base URL a user chose could put anything there.
func errorReason(raw []byte, fallback string) string {
	var body struct {
		Error json.RawMessage `json:"error"`
		Type  string          `json:"type"`
		Code  json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var nested struct {
			Type string          `json:"type"`
			Code json.RawMessage `json:"code"`
		}
		if json.Unmarshal(body.Error, &nested) == nil {
			if r := firstIdentifier(stringOf(nested.Code), nested.Type); r != "" {
				return r
			}
		}
		if r := firstIdentifier(stringOf(body.Code), body.Type); r != "" && r != "error" {
			return r
		}
	}
	return fallback
}

func stringOf(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// firstIdentifier is the first of vs that looks like an error code, or "".
func firstIdentifier(vs ...string) string {
	for _, v := range vs {
		if isIdentifier(v) {
			return v
		}
	}
	return ""
}

// isIdentifier: a letter, then at most 63 letters, digits, '_', '.' or '-'.
func isIdentifier(s string) bool {
	if s == "" || len(s) > 64 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// statusText is the standard text of an HTTP status, or its number.
func statusText(code int) string {
	if text := http.StatusText(code); text != "" {
		return text
	}
	return "HTTP " + strconv.Itoa(code)
}

// readJSON decodes a whole (bounded) body into v, telling a broken
// connection (retryable) from content that is not the expected JSON.
func readJSON(body io.Reader, v any) error {
	raw, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return malformed("response is not valid JSON: %v", err)
	}
	return nil
}

func malformed(format string, args ...any) *Error {
	return &Error{Type: ErrMalformedResponse, Message: fmt.Sprintf(format, args...)}
}
