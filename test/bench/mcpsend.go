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
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

func init() {
	register("mcp-send", benchMCPSend)
}

// mcpSends is how many sends each path makes, one at a time, into the same session.
const mcpSends = 40

// benchMCPSend is mcp_send_overhead_ms: a sessions_send over /mcp (token review,
// impersonated create, server-side wait, streamable HTTP) against the same send made with a
// direct API create and a watch, side by side, one at a time, p50 each.
func benchMCPSend() ([]Figure, error) {
	ctx := context.Background()
	c, _, cl, dyn, stop, err := clusterClients(ctx, "bench-mcp-send.log", nil, 500)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := setupSendFixtures(ctx, cl); err != nil {
		return nil, err
	}
	cs, err := benchfig.ConnectMCP(ctx, c.MCPURL(sendNS), c.Token, c.HistoryCAFile)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cs.Close() }()

	d, m, err := sideBySide(ctx, dyn, func() (time.Duration, error) { return mcpSend(ctx, cs) })
	if err != nil {
		return nil, err
	}
	// A call that waits on nothing, to split the overhead into the MCP round trip (token
	// review, impersonated client, streamable HTTP) and the send's wait.
	var l []time.Duration
	for range mcpSends {
		start := time.Now()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sessions_list", Arguments: map[string]any{"limit": 1}}); err != nil {
			return nil, err
		}
		l = append(l, time.Since(start))
	}
	big, err := mcpListMany(ctx, c, cl)
	if err != nil {
		return nil, err
	}
	dp50, mp50 := msOf(median(d)), msOf(median(m))
	return []Figure{
		{Name: "mcp_list_p50_ms", Value: msOf(median(l)), Unit: "ms"},
		{Name: "mcp_list_50_of_10k_p50_ms", Value: msOf(median(big)), Unit: "ms",
			Target: "sessions_list limit 50 in a namespace of 10,000 sessions, a person on a connected MCP session"},
		{Name: "direct_send_p50_ms", Value: dp50, Unit: "ms"},
		{Name: "mcp_send_p50_ms", Value: mp50, Unit: "ms"},
		Compare("mcp_send_overhead_ms", mp50-dp50, dp50, "ms", "MCP p50 minus direct p50; baseline is the direct p50"),
	}, nil
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// directSend creates a person's send into worker 0's target and waits for its ok.
func directSend(ctx context.Context, dyn dynamic.Interface, name string) (time.Duration, error) {
	w, stop, err := startWaiter(ctx, dyn, sendGVR, sendOK)
	if err != nil {
		return 0, err
	}
	defer stop()
	ch := w.expect(name)
	start := time.Now()
	if _, err := dyn.Resource(sendGVR).Namespace(sendNS).Create(ctx, newSend(name, 0), metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	select {
	case <-ch:
		return time.Since(start), nil
	case <-time.After(60 * time.Second):
		return 0, fmt.Errorf("send %s not ok after 60s", name)
	}
}

// mcpSend makes the same send with sessions_send, waiting server-side for the reply.
func mcpSend(ctx context.Context, cs *mcp.ClientSession) (time.Duration, error) {
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sessions_send",
		Arguments: map[string]any{"sessionKey": targetKey(0), "message": "hello", "timeoutSeconds": 30}})
	if err != nil {
		return 0, err
	}
	took := time.Since(start)
	if text := benchfig.ToolText(res); res.IsError || !strings.Contains(text, `"status":"ok"`) {
		return 0, errors.New("sessions_send over MCP: " + text)
	}
	return took, nil
}

// listSessions is the size of mcpListMany's namespace.
const listSessions = 10000

// mcpListMany creates listSessions sessions in a namespace of their own and times
// sessions_list limit 50 there, as a person on a connected MCP session.
func mcpListMany(ctx context.Context, c *devcluster.Cluster, cl client.Client) ([]time.Duration, error) {
	const ns = "bench-list"
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range listSessions {
		g.Go(func() error {
			key := fmt.Sprintf("agent:%s:webchat:group:l%d", "bench", i)
			return cl.Create(gctx, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: ns},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "bench", Channel: "webchat", ChatType: sessionsv1alpha1.ChatTypeGroup}})
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("creating %d sessions: %w", listSessions, err)
	}
	return timeMCPList(ctx, c, ns, mcpSends)
}

// timeMCPList times n calls of sessions_list limit 50 in namespace ns, as a person on a
// connected MCP session, once the sidecar's cache answers a full page.
func timeMCPList(ctx context.Context, c *devcluster.Cluster, ns string, n int) ([]time.Duration, error) {
	cs, err := benchfig.ConnectMCP(ctx, c.MCPURL(ns), c.Token, c.HistoryCAFile)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cs.Close() }()
	list := func() error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sessions_list", Arguments: map[string]any{"limit": 50}})
		if err != nil {
			return err
		}
		if text := benchfig.ToolText(res); res.IsError || !strings.Contains(text, `"count":50`) {
			return fmt.Errorf("sessions_list: %.200s", text)
		}
		return nil
	}
	// The sidecar's cache fills as it watches the creates: wait for a full page, then give
	// the watch a moment to deliver the rest.
	deadline := time.Now().Add(time.Minute)
	for err := list(); err != nil; err = list() {
		if time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	var out []time.Duration
	for i := range 5 + n {
		start := time.Now()
		if err := list(); err != nil {
			return nil, err
		}
		if i >= 5 {
			out = append(out, time.Since(start))
		}
	}
	return out, nil
}
