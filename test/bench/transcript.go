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
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func init() {
	register("transcript", benchTranscript)
}

const benchNS = "bench"

func benchTranscript() ([]Figure, error) {
	dir, err := os.MkdirTemp("", "transcript-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	var figs []Figure
	rate, err := benchAppendRate(filepath.Join(dir, "append"))
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	figs = append(figs, Figure{Name: "transcript_append_per_s", Value: rate, Unit: "appends/s", Target: ">= 20000 (durable, group commit)"})

	hist, err := benchHistory(filepath.Join(dir, "history"))
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	figs = append(figs, hist...)

	sse, err := benchSSE(filepath.Join(dir, "sse"))
	if err != nil {
		return nil, fmt.Errorf("sse: %w", err)
	}
	return append(figs, sse...), nil
}

func benchMessage(i int) transcript.Message {
	return transcript.Message{
		Role:    transcript.RoleAssistant,
		Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "reply number " + strconv.Itoa(i) + ": " + strings.Repeat("lorem ipsum ", 12)}},
		Model:   "scripted", Provider: "scripted",
		Usage: &transcript.Usage{Input: 40, Output: 30, TotalTokens: 70},
	}
}

// benchAppendRate: 128 concurrent appenders on one session for 2 s, every append durable.
func benchAppendRate(root string) (float64, error) {
	st, err := store.OpenFileStore(root)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return appendRate(st)
}

// appendRate measures benchAppendRate's appends on st.
func appendRate(st *store.FileStore) (float64, error) {
	ctx := context.Background()
	if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: benchNS, SessionID: "append", SessionKey: "agent:bench:main"}); err != nil {
		return 0, err
	}
	const appenders = 128
	var count atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(2 * time.Second)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				key := fmt.Sprintf("w%d-%d", w, i)
				if _, err := st.Append(ctx, benchNS, "append", transcript.AppendRequest{IdempotencyKey: key, Message: benchMessage(i)}); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return 0, err
	}
	return float64(count.Load()) / time.Since(start).Seconds(), nil
}

// writeBenchTranscript writes a transcript directly (header + n records), bypassing fsyncs.
func writeBenchTranscript(root, id string, n int) (string, error) {
	path := filepath.Join(root, benchNS, id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", err
	}
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	hdr, err := transcript.EncodeHeader(transcript.SessionHeader{Namespace: benchNS, SessionID: id, SessionKey: "agent:bench:" + id, CreatedAt: time.Now()})
	if err != nil {
		return "", err
	}
	_, _ = w.Write(hdr)
	ts := time.Now().UTC()
	for i := 1; i <= n; i++ {
		m := benchMessage(i)
		if i%4 == 0 {
			m = transcript.Message{Role: transcript.RoleToolResult, ToolCallID: "c" + strconv.Itoa(i), ToolName: "sessions_list",
				Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: `{"sessions":[]}`}}}
		}
		line, err := transcript.EncodeRecord(&transcript.Record{Seq: int64(i), ID: "r" + strconv.Itoa(i), TS: ts, IdempotencyKey: "k" + strconv.Itoa(i), Message: m})
		if err != nil {
			return "", err
		}
		_, _ = w.Write(line)
	}
	return path, w.Flush()
}

func benchHistory(root string) ([]Figure, error) {
	const tail = 50
	if _, err := writeBenchTranscript(root, "h1k", 1000); err != nil {
		return nil, err
	}
	path100k, err := writeBenchTranscript(root, "h100k", 100000)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenFileStore(root)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	tailUS := func(id string) (float64, error) {
		read := func() error {
			p, err := st.Read(context.Background(), benchNS, id, transcript.ReadOptions{Limit: tail})
			if err == nil && len(p.Messages) != tail {
				err = fmt.Errorf("got %d messages", len(p.Messages))
			}
			return err
		}
		if err := read(); err != nil { // the first use builds the in-memory index
			return 0, err
		}
		return medianMicros(300, read)
	}
	t1k, err := tailUS("h1k")
	if err != nil {
		return nil, err
	}
	t100k, err := tailUS("h100k")
	if err != nil {
		return nil, err
	}
	full, err := medianMicros(5, func() error { return naiveTail(path100k, tail) })
	if err != nil {
		return nil, err
	}
	return []Figure{
		{Name: "history_tail_1k_us", Value: t1k, Unit: "us", Target: "independent of length"},
		{Name: "history_tail_100k_us", Value: t100k, Unit: "us", Target: "independent of length"},
		{Name: "history_fullread_100k_us", Value: full, Unit: "us", Target: "baseline: read and parse the whole file"},
		Compare("history_tail_vs_fullread_ratio", t100k, full, "us", "ratio <= 0.01 (tail >= 100x faster)"),
	}, nil
}

// naiveTail is the baseline: read the whole file, parse every line, keep the last n.
func naiveTail(path string, n int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var recs []transcript.Record
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if i == 0 {
			continue
		}
		r, err := transcript.DecodeRecord(line)
		if err != nil {
			return err
		}
		if r.Message.Role != transcript.RoleToolResult {
			recs = append(recs, r)
		}
	}
	if len(recs) < n {
		return errors.New("short transcript")
	}
	_ = recs[len(recs)-n:]
	return nil
}

func medianMicros(runs int, f func() error) (float64, error) {
	d := make([]float64, 0, runs)
	for range runs {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		d = append(d, float64(time.Since(start).Nanoseconds())/1e3)
	}
	slices.Sort(d)
	return d[len(d)/2], nil
}

// The history follow suite: sseFollowers followers of one session, an append every 50 ms.
const sseFollowers, sseMessages = 1000, 150

// benchSSE: sseFollowers followers of one session over loopback HTTP, in a process of their
// own (ssefollowers.go says why); latency from the start of an Append call to the moment
// each follower has read the message event. Both processes' CPU counts.
func benchSSE(root string) ([]Figure, error) {
	const followers, messages = sseFollowers, sseMessages
	st, err := store.OpenFileStore(root)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: benchNS, SessionID: "sse", SessionKey: "agent:bench:sse"}); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/sessions/", transcriptstore.NewHistoryHandler(transcriptstore.HistoryOptions{Source: st, DefaultNamespace: benchNS,
		// Every follower is the same (unauthenticated) caller here.
		MaxStreamsPerUser: followers}))
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	procs, err := startFollowers("http://" + ln.Addr().String() + "/sessions/agent%3Abench%3Asse/history?follow=1&limit=1")
	if err != nil {
		return nil, err
	}
	// One append every 50 ms: a busy session, and a rate at which the 1,000 deliveries of one
	// append (both processes on 2 cores) finish before the next append starts.
	sent := make([]int64, messages+1)
	appends := make([]time.Duration, 0, messages)
	cpu0 := processCPUSeconds(os.Getpid())
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for i := 1; i <= messages; i++ {
		<-tick.C
		sent[i] = time.Now().UnixNano()
		recs, err := st.Append(ctx, benchNS, "sse", transcript.AppendRequest{IdempotencyKey: "m" + strconv.Itoa(i), Message: benchMessage(i)})
		appends = append(appends, time.Duration(time.Now().UnixNano()-sent[i]))
		if err == nil && recs[0].Seq != int64(i) {
			err = fmt.Errorf("append %d got seq %d", i, recs[0].Seq)
		}
		if err != nil {
			_ = procs.cmd.Process.Kill()
			_, _, _ = procs.wait()
			return nil, err
		}
	}
	recv, followersCPU, err := procs.wait()
	if err != nil {
		return nil, err
	}
	cpuPerEvent := (processCPUSeconds(os.Getpid()) - cpu0 + followersCPU) / float64(followers*messages) * 1e6
	all := make([]time.Duration, 0, followers*messages)
	for _, r := range recv {
		for seq := 1; seq <= messages; seq++ {
			all = append(all, time.Duration(r[seq]-sent[seq]))
		}
	}
	return []Figure{
		{Name: "sse_follow_p50_ms", Value: quantileMS(all, 0.50), Unit: "ms"},
		{Name: "sse_follow_p99_ms", Value: quantileMS(all, 0.99), Unit: "ms", Target: "< 20 (1,000 followers, an append every 50 ms)"},
		{Name: "sse_follow_cpu_us", Value: cpuPerEvent, Unit: "cpu-µs", Target: "CPU per delivered event, the store's and the followers' processes (the same at any load)"},
		{Name: "sse_append_p99_ms", Value: quantileMS(appends, 0.99), Unit: "ms", Target: "the append alone (its fsync), inside the follow latency"},
	}, nil
}
