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
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

func init() {
	register("sse", benchSSE)
}

const (
	sseFollowers = 100
	sseSends     = 20
	ssePace      = 250 * time.Millisecond
)

// benchSSE: 100 followers of one session on each system's history stream (SSE), then 20
// messages sent into it one every 250 ms. A figure is the time from a record's own
// timestamp (when the system appended it) to its arrival at a follower, over every
// (message, follower) pair.
func benchSSE(ctx context.Context, p *peers) ([]benchfig.Figure, error) {
	if err := ensureOurSessions(ctx, p.cl, 1); err != nil {
		return nil, err
	}
	ourLat, err1 := follow(ctx, p.history, p.ourHistoryURL(0, 1), p.ours.Token, ourAppended,
		func() error { return p.ourSend(ctx, ourKey(0), 30) })
	theirLat, err2 := follow(ctx, gatewayHTTP, p.theirHistoryURL(0, 1), p.theirs.Token, theirAppended,
		func() error { return p.theirSend(ctx, theirKey(0)) })
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("sse: ours %v, openclaw %v", err1, err2)
	}
	target := fmt.Sprintf("append-to-receive, %d followers of one session, %d sends 250 ms apart", sseFollowers, sseSends)
	return []benchfig.Figure{
		benchfig.Compare("peer_sse_follow_p50_ms", quantileMS(ourLat, 0.5), quantileMS(theirLat, 0.5), "ms", target),
		benchfig.Compare("peer_sse_follow_p99_ms", quantileMS(ourLat, 0.99), quantileMS(theirLat, 0.99), "ms", target),
	}, nil
}

// ourAppended reads the record timestamps of one of our SSE events ("message": a record).
func ourAppended(event, data string) []time.Time {
	if event != "message" {
		return nil
	}
	var rec struct {
		TS time.Time `json:"ts"`
	}
	if json.Unmarshal([]byte(data), &rec) != nil || rec.TS.IsZero() {
		return nil
	}
	return []time.Time{rec.TS}
}

// theirAppended reads the record timestamps of one of OpenClaw's SSE events ("history":
// the appended items, each with __openclaw.recordTimestampMs).
func theirAppended(event, data string) []time.Time {
	if event != "history" {
		return nil
	}
	var page struct {
		Items []struct {
			Meta struct {
				RecordTimestampMs int64 `json:"recordTimestampMs"`
			} `json:"__openclaw"`
		} `json:"items"`
	}
	if json.Unmarshal([]byte(data), &page) != nil {
		return nil
	}
	var out []time.Time
	for _, it := range page.Items {
		if it.Meta.RecordTimestampMs > 0 {
			out = append(out, time.UnixMilli(it.Meta.RecordTimestampMs))
		}
	}
	return out
}

// follow opens sseFollowers streams of u, waits until each has its first event (the
// snapshot), runs send sseSends times, and returns every later record's append-to-receive
// latency across all followers.
func follow(ctx context.Context, hc *http.Client, u, token string, appended func(event, data string) []time.Time, send func() error) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	ready := make(chan error, sseFollowers)
	var wg sync.WaitGroup
	for range sseFollowers {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := hc.Do(req)
			if err != nil {
				ready <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				ready <- fmt.Errorf("GET %s: %s", u, resp.Status)
				return
			}
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			first := true
			var event string
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "event: "):
					event = strings.TrimPrefix(line, "event: ")
				case strings.HasPrefix(line, "data: "):
					now := time.Now()
					if first {
						first = false
						ready <- nil
						continue
					}
					ts := appended(event, strings.TrimPrefix(line, "data: "))
					mu.Lock()
					for _, t := range ts {
						lat = append(lat, now.Sub(t))
					}
					mu.Unlock()
				}
			}
		})
	}
	for range sseFollowers {
		select {
		case err := <-ready:
			if err != nil {
				return nil, err
			}
		case <-time.After(2 * time.Minute):
			return nil, fmt.Errorf("followers of %s not all connected after 2m", u)
		}
	}
	for range sseSends {
		if err := send(); err != nil {
			return nil, err
		}
		time.Sleep(ssePace)
	}
	time.Sleep(3 * time.Second) // the last records reach every follower
	cancel()
	wg.Wait()
	if len(lat) == 0 {
		return nil, fmt.Errorf("no record reached the followers of %s", u)
	}
	return lat, nil
}
