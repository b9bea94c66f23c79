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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/delivery/chatfake"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
)

func init() {
	register("delivery", benchDelivery)
}

// deliveryRounds is how many announces each side of the delivery suite sends.
const deliveryRounds = 300

// benchDelivery measures delivery_overhead_ms: from an announce's text in hand to the first
// byte of its request at a local Telegram-shaped server (formatting, escaping, splitting,
// the sink's rate limit, the egress-guarded and bounded client), p50. The baseline is a
// bare net/http POST of the same JSON to the same server, taken in turn with it.
func benchDelivery() ([]Figure, error) {
	const token = "123456:bench-token"
	platform := chatfake.New(chatfake.Telegram, token)
	var arrived atomic.Int64
	platform.OnRequest(func() { arrived.Store(time.Now().UnixNano()) })
	srv := httptest.NewServer(platform)
	defer srv.Close()
	allow, err := egress.Parse([]string{srv.URL}, false)
	if err != nil {
		return nil, err
	}
	d := delivery.New(allow)
	sink := delivery.ChatSink{Kind: delivery.KindTelegram, Channel: "telegram", APIURL: srv.URL, Token: token,
		RatePerMinute: 6000, Key: "bench/telegram"}
	text := "Status: ok\nResult: " + strings.Repeat("the sub-agent found it ", 20) + "\nStats: runtime 1.2s"
	raw := []byte(`{"chat_id":"-1001234","text":"` + strings.ReplaceAll(text, "\n", `\n`) + `","link_preview_options":{"is_disabled":true}}`)
	bare := &http.Client{Transport: http.DefaultTransport}
	ctx := context.Background()
	var ours, base []time.Duration
	for i := range deliveryRounds {
		start := time.Now()
		parts := delivery.TelegramFormat.Render(text)
		if _, err := d.Post(ctx, sink, delivery.ChatMessage{To: "-1001234", Text: parts[0], Key: fmt.Sprint("bench/", i)}); err != nil {
			return nil, fmt.Errorf("delivery: %w", err)
		}
		ours = append(ours, time.Duration(arrived.Load()-start.UnixNano()))

		start = time.Now()
		resp, err := bare.Post(srv.URL+"/bot"+token+"/sendMessage", "application/json", bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, errors.New("the bare POST was refused")
		}
		base = append(base, time.Duration(arrived.Load()-start.UnixNano()))
	}
	if n := len(platform.Messages()); n != 2*deliveryRounds {
		return nil, fmt.Errorf("the server took %d messages, want %d", n, 2*deliveryRounds)
	}
	p50 := func(ds []time.Duration) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	return []Figure{Compare("delivery_overhead_ms", p50(ours), p50(base), "ms", "announce text to the sink's first byte, p50; baseline a bare POST")}, nil
}
