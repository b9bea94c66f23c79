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
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"k8s.io/client-go/dynamic"

	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

func init() {
	register("a2a-send", benchA2ASend)
}

// benchA2ASend is a2a_send_overhead_ms: an A2A 1.0 SendMessage to the target's Agent (token
// review, impersonated create, the wait on the /events hub, JSON-RPC over HTTPS) into the
// target session as its context, against the same send made with a direct API create and a
// watch, side by side, one at a time, p50 each; and a2a_stream_first_byte_ms, the p50 from a
// SendStreamingMessage's request to its first event (the task) on the wire.
func benchA2ASend() ([]Figure, error) {
	ctx := context.Background()
	// Each message costs the caller two API calls (the Agent, the create): back to back they
	// pass the store's per-user bound (20/s), a bound on abuse that the figure is not about,
	// so the bench's caller gets room.
	c, stop, err := benchfig.StartCluster(ctx, "bench-a2a-send.log", devcluster.Options{
		StoreArgs: []string{"--api-qps-per-user=500", "--api-burst-per-user=1000"}})
	if err != nil {
		return nil, err
	}
	defer stop()
	cl, dyn, err := benchClients(c, 500)
	if err != nil {
		return nil, err
	}
	if err := setupSendFixtures(ctx, cl); err != nil {
		return nil, err
	}
	hc, err := benchfig.HistoryClient(c.Token, c.HistoryCAFile)
	if err != nil {
		return nil, err
	}
	t := a2aclient.NewJSONRPCTransport(c.HistoryURL()+"/a2a/"+sendNS+"/bench", hc)
	d, a, err := sideBySide(ctx, dyn, func() (time.Duration, error) { return a2aSend(ctx, t) })
	if err != nil {
		return nil, err
	}
	var first []time.Duration
	for range mcpSends {
		took, err := a2aStreamFirstEvent(ctx, t)
		if err != nil {
			return nil, err
		}
		first = append(first, took)
	}
	dp50, ap50 := msOf(median(d)), msOf(median(a))
	return []Figure{
		{Name: "direct_send_p50_ms", Value: dp50, Unit: "ms"},
		{Name: "a2a_send_p50_ms", Value: ap50, Unit: "ms"},
		Compare("a2a_send_overhead_ms", ap50-dp50, dp50, "ms", "A2A p50 minus direct p50; baseline is the direct p50"),
		{Name: "a2a_stream_first_byte_ms", Value: msOf(median(first)), Unit: "ms"},
	}, nil
}

// a2aVersion names A2A 1.0 on each call, as the SDK's client does.
var a2aVersion = a2aclient.ServiceParams{a2a.SvcParamVersion: {string(a2a.Version)}}

// a2aStreamFirstEvent streams "hello" into the target session and times its first event,
// then reads the stream to its end (the next call starts on a quiet session).
func a2aStreamFirstEvent(ctx context.Context, t a2aclient.Transport) (time.Duration, error) {
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))
	msg.ContextID = targetKey(0)
	start := time.Now()
	var first time.Duration
	for ev, err := range t.SendStreamingMessage(ctx, a2aVersion, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			return 0, err
		}
		if first == 0 {
			first = time.Since(start)
			if _, ok := ev.(*a2a.Task); !ok {
				return 0, fmt.Errorf("A2A SendStreamingMessage: first event %T, want the task", ev)
			}
		}
	}
	if first == 0 {
		return 0, fmt.Errorf("A2A SendStreamingMessage: no event")
	}
	return first, nil
}

// a2aSend sends "hello" into the target session by A2A and waits for the completed task.
func a2aSend(ctx context.Context, t a2aclient.Transport) (time.Duration, error) {
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))
	msg.ContextID = targetKey(0)
	start := time.Now()
	res, err := t.SendMessage(ctx, a2aVersion, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		return 0, err
	}
	took := time.Since(start)
	if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted {
		return 0, fmt.Errorf("A2A SendMessage: %#v", res)
	}
	return took, nil
}

// sideBySide times mcpSends direct sends and as many through another door (via), alternating
// them after a warm-up of both, so load drifts hit both alike.
func sideBySide(ctx context.Context, dyn dynamic.Interface, via func() (time.Duration, error)) (direct, door []time.Duration, err error) {
	one := func(i int) (time.Duration, error) {
		return directSend(ctx, dyn, fmt.Sprintf("direct-%d-%d", time.Now().UnixNano(), i))
	}
	for i := range 5 {
		if _, err := one(i); err != nil {
			return nil, nil, fmt.Errorf("warm-up direct send: %w", err)
		}
		if _, err := via(); err != nil {
			return nil, nil, fmt.Errorf("warm-up send: %w", err)
		}
	}
	for i := range mcpSends {
		dd, err := one(i)
		if err != nil {
			return nil, nil, err
		}
		vd, err := via()
		if err != nil {
			return nil, nil, err
		}
		direct, door = append(direct, dd), append(door, vd)
	}
	return direct, door, nil
}
