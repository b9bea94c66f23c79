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
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

func init() { register("events", benchEvents) }

// benchEvents: 1,000 subscribers of one namespace's /events over loopback HTTP; latency
// from the start of an Append call to the moment each subscriber has read its
// session.message event. Every subscriber is the same unauthenticated caller here.
func benchEvents() ([]Figure, error) {
	const subscribers, messages = 1000, 100
	dir, err := os.MkdirTemp("", "bench-events-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	hub := events.NewHub(0, "bench")
	st, err := store.OpenFileStore(dir, transcriptstore.PublishCommits(hub))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: benchNS, SessionID: "ev", SessionKey: "agent:bench:ev"}); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: transcriptstore.NewEventsHandler(hub, nil, st, nil, benchNS, logr.Discard())}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	url := "http://" + ln.Addr().String() + "/events?namespace=" + benchNS + "&kinds=session.message"
	f := newFanout(subscribers, messages)
	client, sent, lat, errs, connected, finished := f.client, f.sent, f.lat, f.errs, &f.connected, &f.finished
	for i := range subscribers {
		go func() {
			defer finished.Done()
			resp, err := client.Get(url) // headers come after the subscription is made
			connected.Done()
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			r := sse.NewReader(resp.Body)
			for {
				ev, err := r.Next()
				if err != nil {
					errs <- err
					return
				}
				var m struct{ Seq int64 }
				if json.Unmarshal(ev.Data, &m) != nil || m.Seq < 1 || m.Seq > messages {
					continue
				}
				lat[i] = append(lat[i], time.Duration(time.Now().UnixNano()-sent[m.Seq].Load()))
				if m.Seq == messages {
					return
				}
			}
		}()
	}
	connected.Wait()
	// One append every 50 ms, as in the history follow suite.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for i := 1; i <= messages; i++ {
		<-tick.C
		sent[i].Store(time.Now().UnixNano())
		if _, err := st.Append(ctx, benchNS, "ev", transcript.AppendRequest{IdempotencyKey: "m" + strconv.Itoa(i), Message: benchMessage(i)}); err != nil {
			return nil, err
		}
	}
	finished.Wait()
	close(errs)
	for err := range errs {
		return nil, fmt.Errorf("subscriber: %w", err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) != subscribers*messages {
		return nil, fmt.Errorf("received %d events, want %d (a lagging subscriber is cut off)", len(all), subscribers*messages)
	}
	return []Figure{
		{Name: "events_fanout_p50_ms", Value: quantileMS(all, 0.50), Unit: "ms", Target: "1,000 subscribers of one namespace, append to receive"},
		{Name: "events_fanout_p99_ms", Value: quantileMS(all, 0.99), Unit: "ms", Target: "1,000 subscribers of one namespace, append to receive"},
	}, nil
}

// fanout is the state of the events suite's subscribers, all in the bench's process: one
// HTTP client, the send time of each seq, each subscriber's latencies, and the waits for
// connecting and finishing.
type fanout struct {
	client              *http.Client
	sent                []atomic.Int64 // seq -> unix nanos at Append start
	lat                 [][]time.Duration
	connected, finished sync.WaitGroup
	errs                chan error
}

func newFanout(followers, messages int) *fanout {
	f := &fanout{
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: followers, DisableCompression: true}},
		sent:   make([]atomic.Int64, messages+1), lat: make([][]time.Duration, followers), errs: make(chan error, followers),
	}
	f.connected.Add(followers)
	f.finished.Add(followers)
	return f
}
