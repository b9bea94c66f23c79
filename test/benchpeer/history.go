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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

func init() {
	register("history", benchHistory)
}

const historyReads = 300

// benchHistory reads the last 50 messages of a large session (bigMessages, seeded here)
// through each system's authenticated history endpoint.
func benchHistory(ctx context.Context, p *peers) ([]benchfig.Figure, error) {
	if err := p.seedOurBigSession(ctx); err != nil {
		return nil, err
	}
	if err := p.seedTheirBigSession(ctx); err != nil {
		return nil, err
	}
	// OpenClaw keeps a core busy for a while after heavy writes: let it go quiet.
	time.Sleep(20 * time.Second)
	ourN, err := p.ourMessageCount(ctx, bigSession)
	if err != nil {
		return nil, err
	}
	theirN, err := p.theirMessageCount(ctx, bigSession)
	if err != nil {
		return nil, err
	}
	ours := func() error { return getJSON(ctx, p.history, p.ourHistoryURL(bigSession, 50), p.ours.Token, nil) }
	theirs := func() error { return getJSON(ctx, gatewayHTTP, p.theirHistoryURL(bigSession, 50), p.theirs.Token, nil) }
	for range 10 { // warm connections and caches
		if err := ours(); err != nil {
			return nil, fmt.Errorf("ours: %w", err)
		}
		if err := theirs(); err != nil {
			return nil, fmt.Errorf("openclaw: %w", err)
		}
	}
	ourLat, err1 := timed(historyReads, ours)
	theirLat, err2 := timed(historyReads, theirs)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("history: ours %v, openclaw %v", err1, err2)
	}
	size := fmt.Sprintf("last 50 of a %d-message (ours) / %d-message (openclaw) session, HTTP with each one's token", ourN, theirN)
	return []benchfig.Figure{
		benchfig.Compare("peer_history_tail_p50_ms", quantileMS(ourLat, 0.5), quantileMS(theirLat, 0.5), "ms", size),
		benchfig.Compare("peer_history_tail_p99_ms", quantileMS(ourLat, 0.99), quantileMS(theirLat, 0.99), "ms", size),
	}, nil
}

func timed(n int, op func() error) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := op(); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(start))
	}
	return lat, nil
}

func (p *peers) ourHistoryURL(session, limit int) string {
	return fmt.Sprintf("%s/sessions/%s/history?namespace=%s&limit=%d", p.ours.HistoryURL(), url.PathEscape(ourKey(session)), peerNS, limit)
}

func (p *peers) theirHistoryURL(session, limit int) string {
	return fmt.Sprintf("%s/sessions/%s/history?limit=%d", p.theirs.URL, url.PathEscape(theirKey(session)), limit)
}

// getJSON GETs u with a bearer token and decodes the body into out (read and dropped when nil).
func getJSON(ctx context.Context, hc *http.Client, u, token string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// ourMessageCount is the seq of the session's last record: how many it has recorded.
func (p *peers) ourMessageCount(ctx context.Context, session int) (int64, error) {
	var page struct {
		Messages []struct {
			Seq int64 `json:"seq"`
		} `json:"messages"`
	}
	if err := getJSON(ctx, p.history, p.ourHistoryURL(session, 1)+"&includeTools=true", p.ours.Token, &page); err != nil {
		return 0, err
	}
	if len(page.Messages) == 0 {
		return 0, nil
	}
	return page.Messages[len(page.Messages)-1].Seq, nil
}

// theirMessageCount is the __openclaw.seq of the session's last message.
func (p *peers) theirMessageCount(ctx context.Context, session int) (int64, error) {
	var page struct {
		Messages []struct {
			Meta struct {
				Seq int64 `json:"seq"`
			} `json:"__openclaw"`
		} `json:"messages"`
	}
	if err := getJSON(ctx, gatewayHTTP, p.theirHistoryURL(session, 1), p.theirs.Token, &page); err != nil {
		return 0, err
	}
	if len(page.Messages) == 0 {
		return 0, nil
	}
	return page.Messages[len(page.Messages)-1].Meta.Seq, nil
}

// ourMessages and theirMessages are the messages recorded in sessions 0..n-1.
func (p *peers) ourMessages(ctx context.Context, n int) (int64, error) {
	return sumCounts(ctx, n, p.ourMessageCount)
}

func (p *peers) theirMessages(ctx context.Context, n int) (int64, error) {
	return sumCounts(ctx, n, p.theirMessageCount)
}

func sumCounts(ctx context.Context, n int, count func(context.Context, int) (int64, error)) (int64, error) {
	var total int64
	for i := range n {
		c, err := count(ctx, i)
		if err != nil {
			return 0, err
		}
		total += c
	}
	return total, nil
}
