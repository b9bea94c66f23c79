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

package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"k8s.io/utils/clock"
)

// Client is the manager's Store over the sidecar's internal API.
type Client struct {
	hc   *http.Client
	base string
	// RetryFor bounds how long connection errors are retried: the sidecar may be restarting.
	RetryFor time.Duration
	Clock    clock.Clock

	// deltas queues live reply pieces for one sender; see LiveReply.
	deltas     chan deltaPost
	deltasOnce sync.Once
	// sends queues SessionSend changes for one sender; see PublishSendChange.
	sends     chan transcript.SendChange
	sendsOnce sync.Once
}

// NewClient talks to the sidecar's internal API over the unix socket at socketPath.
func NewClient(socketPath string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socketPath)
		},
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	return &Client{hc: &http.Client{Transport: tr}, base: "http://transcript-store", RetryFor: 10 * time.Second, Clock: clock.RealClock{}}
}

// NewLoopbackClient talks to the internal API at baseURL (e.g. http://127.0.0.1:8091).
func NewLoopbackClient(baseURL string) *Client {
	return &Client{hc: &http.Client{}, base: baseURL, RetryFor: 10 * time.Second, Clock: clock.RealClock{}}
}

func sessionPath(ns, id, rest string) string {
	return transcript.APISessionsPath + "/" + url.PathEscape(ns) + "/" + url.PathEscape(id) + rest
}

// CreateSession implements Store.
func (c *Client) CreateSession(ctx context.Context, h transcript.SessionHeader) (transcript.Stats, error) {
	var st transcript.Stats
	return st, c.do(ctx, http.MethodPost, transcript.APISessionsPath, h, &st)
}

// Append implements Store. Retrying after a broken connection is safe: appends carry
// idempotency keys, so a batch the sidecar stored before it died is not stored twice.
func (c *Client) Append(ctx context.Context, namespace, sessionID string, reqs ...transcript.AppendRequest) ([]transcript.Record, error) {
	for i := range reqs {
		if err := reqs[i].ValidateForAppend(); err != nil {
			return nil, err
		}
	}
	var out transcript.AppendBody
	err := c.do(ctx, http.MethodPost, sessionPath(namespace, sessionID, "/messages"), transcript.AppendBody{Messages: reqs}, &out)
	return out.Records, err
}

// Read implements Store.
func (c *Client) Read(ctx context.Context, namespace, sessionID string, opts transcript.ReadOptions) (transcript.Page, error) {
	var p transcript.Page
	return p, c.do(ctx, http.MethodGet, sessionPath(namespace, sessionID, "/messages")+"?"+readQuery(opts).Encode(), nil, &p)
}

// readQuery is the query of a page read.
func readQuery(opts transcript.ReadOptions) url.Values {
	q := url.Values{}
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.BeforeSeq > 0 {
		q.Set("cursor", transcript.FormatCursor(opts.BeforeSeq))
	}
	if opts.AfterSeq > 0 {
		q.Set("after", transcript.FormatCursor(opts.AfterSeq))
	}
	if opts.IncludeTools {
		q.Set("includeTools", "1")
	}
	return q
}

// Stats implements Store.
func (c *Client) Stats(ctx context.Context, namespace, sessionID string) (transcript.Stats, error) {
	var st transcript.Stats
	return st, c.do(ctx, http.MethodGet, sessionPath(namespace, sessionID, "/stats"), nil, &st)
}

// Archive implements Store.
func (c *Client) Archive(ctx context.Context, namespace, sessionID string) error {
	return c.do(ctx, http.MethodPost, sessionPath(namespace, sessionID, "/archive"), nil, nil)
}

// Restore implements Store.
func (c *Client) Restore(ctx context.Context, namespace, sessionID string) error {
	return c.do(ctx, http.MethodPost, sessionPath(namespace, sessionID, "/restore"), nil, nil)
}

// Search asks the sidecar's search index.
func (c *Client) Search(ctx context.Context, q transcript.SearchQuery) (transcript.SearchResult, error) {
	var res transcript.SearchResult
	return res, c.do(ctx, http.MethodPost, transcript.APISearchPath, q, &res)
}

// Recall asks the sidecar's memory index.
func (c *Client) Recall(ctx context.Context, q transcript.MemoryQuery) (transcript.MemoryResult, error) {
	var res transcript.MemoryResult
	return res, c.do(ctx, http.MethodPost, transcript.APIMemoryRecallPath, q, &res)
}

// MemoryGet asks the sidecar's memory index for a chunk and its neighbours.
func (c *Client) MemoryGet(ctx context.Context, q transcript.MemoryGet) (transcript.MemoryChunks, error) {
	var res transcript.MemoryChunks
	return res, c.do(ctx, http.MethodPost, transcript.APIMemoryGetPath, q, &res)
}

// RegisterMemory hands the sidecar an Agent's embeddings provider.
func (c *Client) RegisterMemory(ctx context.Context, a transcript.MemoryAgent) error {
	return c.do(ctx, http.MethodPost, transcript.APIMemoryAgentsPath, a, nil)
}

// IndexSpend collects what the sidecar's memory indexer owes the budgets, acknowledging
// the last tally charged and naming the namespaces to hold.
func (c *Client) IndexSpend(ctx context.Context, a transcript.IndexSpendAck) (transcript.IndexSpend, error) {
	var s transcript.IndexSpend
	err := c.do(ctx, http.MethodPost, transcript.APIMemorySpendPath, a, &s)
	return s, err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return errors.Join(transcript.ErrInvalid, err)
		}
	}
	deadline := c.Clock.Now().Add(c.RetryFor)
	backoff := 20 * time.Millisecond
	for {
		resp, err := c.once(ctx, method, path, body)
		if err == nil {
			defer resp.Body.Close()
			return decodeResponse(resp, out)
		}
		if ctx.Err() != nil || !c.Clock.Now().Add(backoff).Before(deadline) {
			return fmt.Errorf("transcript-store %s %s: %w", method, path, err)
		}
		t := c.Clock.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
		backoff = min(2*backoff, time.Second)
	}
}

func (c *Client) once(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.hc.Do(req)
}

func decodeResponse(resp *http.Response, out any) error {
	if resp.StatusCode >= 300 {
		var eb transcript.ErrorBody
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &eb) != nil || eb.Error.Message == "" {
			eb.Error.Message = resp.Status
		}
		switch eb.Error.Type {
		case transcript.ErrTypeNotFound:
			return fmt.Errorf("%w (%s)", transcript.ErrNotFound, eb.Error.Message)
		case transcript.ErrTypeInvalidRequest:
			return fmt.Errorf("%w (%s)", transcript.ErrInvalid, eb.Error.Message)
		case transcript.ErrTypeUnavailable:
			return fmt.Errorf("%w (%s)", transcript.ErrClosed, eb.Error.Message)
		case transcript.ErrTypeFull:
			return fmt.Errorf("%w (%s)", transcript.ErrFull, eb.Error.Message)
		}
		return fmt.Errorf("transcript-store: %s: %s", resp.Status, eb.Error.Message)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// LiveNamespaces implements Store.
func (c *Client) LiveNamespaces(ctx context.Context) ([]string, error) {
	var l transcript.LiveList
	return l.Namespaces, c.do(ctx, http.MethodGet, transcript.APILivePath, nil, &l)
}

// LiveSessionIDs implements Store.
func (c *Client) LiveSessionIDs(ctx context.Context, namespace, after string, limit int) ([]string, error) {
	q := url.Values{"namespace": {namespace}, "limit": {strconv.Itoa(transcript.ClampLivePage(limit))}}
	if after != "" {
		q.Set("after", after)
	}
	var l transcript.LiveList
	return l.SessionIDs, c.do(ctx, http.MethodGet, transcript.APILivePath+"?"+q.Encode(), nil, &l)
}
