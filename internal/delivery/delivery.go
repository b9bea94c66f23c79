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

// Package delivery posts announce messages to the channel sinks a SessionPolicy names: one
// JSON POST per announce with an Idempotency-Key header, so a sink that sees the same key
// twice (a retry, a manager restarted mid-delivery) can drop the copy.
package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/egress"
)

// Message is what a sink receives.
type Message struct {
	Namespace      string `json:"namespace"`
	SessionKey     string `json:"sessionKey"`
	Channel        string `json:"channel"`
	To             string `json:"to,omitempty"`
	AccountID      string `json:"accountId,omitempty"`
	ThreadID       string `json:"threadId,omitempty"`
	Text           string `json:"message"`
	IdempotencyKey string `json:"idempotencyKey"`
	// Type is empty for an announce, TypeApprovalRequested for a tool call that waits for a
	// person (Text is then a link-free summary and Approval says which call).
	Type     string          `json:"type,omitempty"`
	Approval *ApprovalNotice `json:"approval,omitempty"`
}

// TypeApprovalRequested is the type of the message a chat bridge gets when a tool call of
// the session waits for a person's decision.
const TypeApprovalRequested = "approval.requested"

// ApprovalNotice names the ToolApproval a person is asked to decide.
type ApprovalNotice struct {
	Name string `json:"name"`
	// Kind is Tool (a tool call) or Budget (a send or run tree at its budget).
	Kind string `json:"kind,omitempty"`
	Tool string `json:"tool,omitempty"`
	// Budget is what a Budget approval asks, as a person reads it.
	Budget    string `json:"budget,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	ExpiresAt string `json:"expiresAt"`
}

// Sink is where one channel's announces go.
type Sink struct {
	URL string
	// Token is sent as a bearer token when set.
	Token string
	// SigningKey, when set, signs every POST as Standard Webhooks says (signing.go).
	SigningKey []byte
	// Record, when set, takes each announce in place of a POST: the events sink kind, which
	// shows announces where kubectl does (an Event) and sends nothing out.
	Record func(Message)
}

// Deliverer posts messages with bounded retries.
type Deliverer struct {
	HTTP *http.Client
	// Attempts is how many times a retryable failure is tried in all (DefaultAttempts; the
	// manager's --delivery-attempts). A chat sink's part gets as many, one per reconcile.
	Attempts int
	// Backoff is the first wait between attempts, doubled each time, with jitter (default
	// 200ms); a 429's Retry-After overrides it, capped at MaxWait.
	Backoff, MaxWait time.Duration
	Clock            clock.Clock

	// sent remembers the keys this process delivered: a reconcile that repeats an announce
	// because its status write failed (the API server is away) does not post it again.
	sent recentKeys
	// limits are the chat sinks' ratePerMinute buckets.
	limits sinkLimits
}

// New returns a Deliverer with the defaults whose connections obey the egress policy p (nil
// refuses loopback, link-local and unspecified addresses) and follow no redirect: a sink
// token is sent to the URL the policy names and nowhere else.
func New(p *egress.Policy) *Deliverer {
	return &Deliverer{HTTP: p.Client(egress.ClientOptions{Timeout: 10 * time.Second, ReadLimit: egress.SinkLimit()}), Attempts: DefaultAttempts, Backoff: 200 * time.Millisecond, MaxWait: 5 * time.Second, Clock: clock.RealClock{}}
}

// DefaultAttempts is how many times a message is tried when --delivery-attempts is not set.
const DefaultAttempts = 5

// Error is a delivery that failed for good. Message is ours (a status text, a refusal, a
// connection failure), never the sink's answer: it lands in status read by namespace users.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return "delivery failed: " + e.Message
	}
	return fmt.Sprintf("delivery failed: sink answered %d: %s", e.Status, e.Message)
}

// Deliver posts m to the sink, retrying 429, 5xx and connection errors.
func (d *Deliverer) Deliver(ctx context.Context, sink Sink, m Message) error {
	if d.sent.has(m.IdempotencyKey) {
		return nil
	}
	if sink.Record != nil {
		sink.Record(m)
		d.sent.add(m.IdempotencyKey)
		return nil
	}
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	wait := d.Backoff
	var last error
	for attempt := 1; ; attempt++ {
		start := d.now()
		retryAfter, err := d.post(ctx, sink, m.IdempotencyKey, body)
		deliverySeconds.WithLabelValues(m.Channel).Observe(d.now().Sub(start).Seconds())
		if err == nil {
			deliveries.WithLabelValues(m.Channel, OutcomeDelivered).Inc()
			d.sent.add(m.IdempotencyKey)
			return nil
		}
		last = err
		var perm *permanent
		if errors.As(err, &perm) || attempt >= d.Attempts {
			deliveries.WithLabelValues(m.Channel, OutcomeFailed).Inc()
			break
		}
		deliveries.WithLabelValues(m.Channel, OutcomeRetried).Inc()
		pause := wait/2 + rand.N(wait/2+1)
		if retryAfter > 0 {
			pause = min(retryAfter, d.MaxWait)
		}
		select {
		case <-ctx.Done():
			return &Error{Message: fmt.Sprintf("%v (after %d attempts: %v)", ctx.Err(), attempt, last)}
		case <-d.Clock.After(pause):
		}
		wait = min(wait*2, d.MaxWait)
	}
	var perm *permanent
	if errors.As(last, &perm) {
		return perm.err
	}
	return &Error{Message: fmt.Sprintf("%d attempts: %v", d.Attempts, last)}
}

type permanent struct{ err *Error }

func (p *permanent) Error() string { return p.err.Error() }

func (d *Deliverer) post(ctx context.Context, sink Sink, key string, body []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sink.URL, bytes.NewReader(body))
	if err != nil {
		return 0, &permanent{&Error{Message: err.Error()}}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	if sink.SigningKey != nil {
		Sign(req.Header, sink.SigningKey, key, d.now(), body)
	}
	if sink.Token != "" {
		req.Header.Set("Authorization", "Bearer "+sink.Token)
	}
	resp, err := d.HTTP.Do(req)
	if err != nil {
		if egress.IsRefused(err) {
			return 0, &permanent{&Error{Message: err.Error()}}
		}
		return 0, err
	}
	defer resp.Body.Close()
	// Drained (bounded) so the connection can be reused; never read into an error.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	reason := http.StatusText(resp.StatusCode)
	switch code := resp.StatusCode; {
	case code < 300:
		return 0, nil
	case code < 400:
		return 0, &permanent{&Error{Status: code, Message: "redirect not followed"}}
	case code == http.StatusTooManyRequests || code >= 500:
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return time.Duration(secs) * time.Second, &Error{Status: code, Message: reason}
	default:
		return 0, &permanent{&Error{Status: code, Message: reason}}
	}
}
