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

	maxErrorBody    = 64 << 10
	maxResponseBody = 32 << 20
)

// defaultHTTPClient has no overall timeout because streams may run long; the
// caller's ctx bounds a call, and these bound each phase of a connection.
var defaultHTTPClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	ForceAttemptHTTP2:     true,
	MaxIdleConns:          100,
	MaxIdleConnsPerHost:   16,
	IdleConnTimeout:       90 * time.Second,
	TLSHandshakeTimeout:   10 * time.Second,
	ResponseHeaderTimeout: 10 * time.Minute,
	ExpectContinueTimeout: time.Second,
}}

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
func (e *endpoint) complete(ctx context.Context, req Request, wire any, decode, decodeStream decodeFunc) (*Response, error) {
	body, err := json.Marshal(wire)
	if err != nil {
		return nil, &Error{Provider: e.cfg.Provider, Type: ErrBadRequest, Message: err.Error(), Err: err}
	}
	if e.cfg.Stream {
		decode = decodeStream
	}
	resp, err := e.t.call(ctx, e.url, e.header, body, decode)
	if err != nil {
		return nil, err
	}
	if resp.Model == "" {
		resp.Model = e.model(req)
	}
	return resp, nil
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
}

// errAttemptTimeout is the cause an attempt is cancelled with when it ran out of time.
var errAttemptTimeout = errors.New("attempt timeout")

func newHTTPTransport(cfg Config) *httpTransport {
	t := &httpTransport{provider: cfg.Provider, client: cfg.HTTPClient, clock: cfg.Clock, maxRetries: cfg.MaxRetries, attempt: cfg.AttemptTimeout}
	if t.attempt == 0 {
		t.attempt = DefaultAttemptTimeout
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
	for attempt := 0; ; attempt++ {
		resp, wait, err := t.once(ctx, url, header, body, decode)
		if err == nil {
			return resp, nil
		}
		var perr *Error
		if !errors.As(err, &perr) || !perr.Retryable || attempt >= t.maxRetries {
			return nil, err
		}
		if wait < 0 {
			wait = fullJitter(attempt)
		}
		if err := t.sleep(ctx, wait, perr); err != nil {
			return nil, err
		}
	}
}

// once makes one attempt, cut off (retryably) when it outlives the attempt timeout on the
// injected clock. wait is what the server asked us to wait before the next one, or -1.
func (t *httpTransport) once(ctx context.Context, url string, header http.Header, body []byte, decode decodeFunc) (*Response, time.Duration, error) {
	if t.attempt <= 0 {
		return t.try(ctx, url, header, body, decode)
	}
	actx, cancel := context.WithCancelCause(ctx)
	timer := t.clock.NewTimer(t.attempt)
	done := make(chan struct{})
	go func() {
		select {
		case <-timer.C():
			cancel(errAttemptTimeout)
		case <-done:
		}
	}()
	defer func() {
		close(done)
		timer.Stop()
		cancel(nil)
	}()
	resp, wait, err := t.try(actx, url, header, body, decode)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout) {
		return nil, -1, &Error{Provider: t.provider, Type: ErrTimeout, Retryable: true, Err: err,
			Message: fmt.Sprintf("no complete answer within the attempt timeout of %s", t.attempt)}
	}
	return resp, wait, err
}

// try makes one attempt without a bound of its own.
func (t *httpTransport) try(ctx context.Context, url string, header http.Header, body []byte, decode decodeFunc) (*Response, time.Duration, error) {
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

	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		out, err := decode(resp.Body)
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

	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	perr := &Error{Provider: t.provider, StatusCode: resp.StatusCode, Message: errorMessage(raw, resp.Status)}
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

// errorMessage pulls a person-readable message out of an error body in the
// shapes OpenAI, Anthropic, vLLM, Ollama and LiteLLM use.
func errorMessage(raw []byte, status string) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(body.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(body.Error, &s) == nil && s != "":
			return s
		case body.Message != "":
			return body.Message
		case json.Unmarshal(body.Detail, &s) == nil && s != "":
			return s
		}
	}
	if text := strings.TrimSpace(string(raw)); text != "" {
		return truncate(text, 300)
	}
	return status
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// readJSON decodes a whole (bounded) body into v, telling a broken
// connection (retryable) from content that is not the expected JSON.
func readJSON(body io.Reader, v any) error {
	raw, err := io.ReadAll(io.LimitReader(body, maxResponseBody))
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
