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
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools/mcptest"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

func init() {
	register("mcp", benchMCP)
}

const (
	mcpWarmTurns = 20
	mcpTurns     = 300
	mcpSessionID = "66666666-6666-4666-8666-666666666666"
	mcpKey       = "agent:bench:main"
)

// benchMCP measures what an MCP tool call costs a turn: turns whose scripted model calls
// mcp__s__echo on an in-process SDK server, against the same turns calling a tool that does
// not exist (same model calls, same transcript appends, an error result at once), minus the
// time the server spent in its handler. The engine runs in-process on a fake API client and
// the in-memory transcript store: neither is on the tool call's path, and both are the same
// on both sides.
func benchMCP() ([]Figure, error) {
	srv := mcptest.New(false)
	defer srv.Close()
	args := &runtime.RawExtension{Raw: []byte(`{"text":"x"}`)}
	agent := &sessionsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: "bench"},
		Spec: sessionsv1alpha1.AgentSpec{
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
				{Match: "^mcp", Reply: "{{toolResults}}", ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: "mcp__s__echo", Arguments: args}}},
				{Match: "^base", Reply: "{{toolResults}}", ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: "no_such_tool", Arguments: args}}},
			}},
			Tools: sessionsv1alpha1.ToolsSpec{MCPServers: []sessionsv1alpha1.MCPServer{{Name: "s", URL: srv.URL}}},
		},
	}
	session := &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: sessionkey.ObjectName(mcpKey)},
		Spec:       sessionsv1alpha1.AgentSessionSpec{Key: mcpKey, AgentID: "bench"},
		Status:     sessionsv1alpha1.AgentSessionStatus{SessionID: mcpSessionID, Phase: sessionsv1alpha1.SessionActive},
	}
	b := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(agent, session).
		WithStatusSubresource(&sessionsv1alpha1.AgentSession{})
	// The engine's lookups read by the manager's field indexes, as from its cache.
	cl := testenv.IndexFake(b).Build()
	store := transcripttest.NewMemoryStore()
	ctx := context.Background()
	if _, err := store.CreateSession(ctx, transcript.SessionHeader{Namespace: benchNS, SessionID: mcpSessionID, SessionKey: mcpKey}); err != nil {
		return nil, err
	}
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	engine, err := turns.NewEngine(turns.Options{Client: cl, Reader: cl, Store: store, Tools: turns.ToolSources{MCP: pool}})
	if err != nil {
		return nil, err
	}
	defer engine.Stop()
	wake := engine.Wake(turns.OwnerSessionSend)

	turn := func(i int, input string) (time.Duration, error) {
		id := "bench-" + strconv.Itoa(i)
		start := time.Now()
		owner := turns.Owner{Kind: turns.OwnerSessionSend, NamespacedName: types.NamespacedName{Namespace: benchNS, Name: id}}
		err := engine.Submit(ctx, turns.TurnRequest{
			ID: id, Namespace: benchNS, SessionKey: mcpKey, Session: session, Agent: agent,
			Input: transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: input}}},
			Owner: owner,
		})
		if err != nil {
			return 0, err
		}
		for ev := range wake {
			if ev.Object.GetName() == id {
				break
			}
		}
		took := time.Since(start)
		res, _ := engine.Result(owner, id)
		engine.Abort(owner)
		if res.Err != nil {
			return 0, fmt.Errorf("turn %s: %w", id, res.Err)
		}
		if input == "mcp" && res.LastToolResult != "Echo: x" {
			return 0, fmt.Errorf("turn %s: tool result %q", id, res.LastToolResult)
		}
		return took, nil
	}

	var withMCP, without []time.Duration
	var serverTime time.Duration
	for i := range mcpWarmTurns + mcpTurns {
		// Alternate, so drift (GC, a busy neighbour) falls on both sides alike.
		before := srv.HandlerTime()
		d, err := turn(2*i, "mcp")
		if err != nil {
			return nil, err
		}
		handler := srv.HandlerTime() - before
		b, err := turn(2*i+1, "base")
		if err != nil {
			return nil, err
		}
		if i >= mcpWarmTurns {
			withMCP, without = append(withMCP, d), append(without, b)
			serverTime += handler
		}
	}
	overhead := median(withMCP) - median(without) - serverTime/time.Duration(len(withMCP))
	us := float64(overhead.Nanoseconds()) / 1e3
	return []Figure{{Name: "mcp_tool_call_overhead_us", Value: us, Unit: "us",
		Target: "per MCP tool call, median turn with the call minus without, minus the server's own time"}}, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
