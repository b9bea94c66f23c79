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
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cli"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

func init() {
	register("list", benchList)
}

const (
	listSessions    = 10000
	pluginListCalls = 20
	theirCalls      = 100
)

// benchList: the 50 most recent of 10,000 sessions as a connected client asks for them: ours
// the MCP sessions_list tool on a connected MCP session, theirs the sessions.list RPC on a
// connected WebSocket client. `kubectl sessions list` (the plugin, run in process: a new
// client and a full LIST each time) is printed beside them. OpenClaw's 10,000 sessions were
// imported by its own doctor before the gateway started (seedTheirSessions); ours are
// created here.
func benchList(ctx context.Context, p *peers) ([]benchfig.Figure, error) {
	if err := createOurSessions(ctx, p, listSessions); err != nil {
		return nil, err
	}
	cs, err := benchfig.ConnectMCP(ctx, p.ours.MCPURL(peerNS), p.ours.Token, p.ours.HistoryCAFile)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	defer func() { _ = cs.Close() }()
	// Each of our calls has a deadline as each of theirs has (rpcCallTimeout): a call that
	// hangs fails the figure with its name instead of running into make's time limit.
	ours := func() error {
		ctx, cancel := context.WithTimeout(ctx, rpcCallTimeout)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sessions_list", Arguments: map[string]any{"limit": 50}})
		if err != nil {
			return err
		}
		var page struct {
			Count int `json:"count"`
		}
		if text := benchfig.ToolText(res); res.IsError || json.Unmarshal([]byte(text), &page) != nil || page.Count != 50 {
			return fmt.Errorf("sessions_list: %.200s", text)
		}
		return nil
	}
	plugin := func() error {
		ctx, cancel := context.WithTimeout(ctx, rpcCallTimeout)
		defer cancel()
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: os.Stdin, Out: &out, ErrOut: &errOut}
		if code := cli.Execute(ctx, streams, []string{"--kubeconfig", p.ours.Kubeconfig, "-n", peerNS, "list", "--limit", "50", "-o", "json"}); code != 0 {
			return fmt.Errorf("kubectl sessions list: exit %d: %s", code, errOut.String())
		}
		var rows []json.RawMessage
		if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 50 {
			return fmt.Errorf("kubectl sessions list: %d rows (%v)", len(rows), err)
		}
		return nil
	}
	for range 3 {
		if err := errors.Join(plugin(), ours()); err != nil {
			return nil, err
		}
	}
	pluginLat, err0 := timed(pluginListCalls, plugin)
	ourLat, err1 := timed(theirCalls, ours)
	if err := errors.Join(err0, err1); err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	// Their connection is dialed only now, and its reads are redialed if it is lost (the
	// gateway closes a client whose pong is late): the timed figure is a connected
	// client's, so each sample is the attempt that answered, and redials are printed.
	theirLat, redials, err := timedGateway(ctx, p.theirs, theirCalls)
	if redials != "" {
		fmt.Fprintf(logOut, "bench-peer: list: %s\n", redials)
	}
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	note := "ours: MCP sessions_list limit 50 on a connected session; openclaw: sessions.list limit 50 on a connected client"
	if redials != "" {
		note += "; " + redials
	}
	return []benchfig.Figure{
		benchfig.Compare("peer_list_50_of_10k_p50_ms", quantileMS(ourLat, 0.5), quantileMS(theirLat, 0.5), "ms", note),
		{Name: "peer_list_50_of_10k_plugin_p50_ms", Value: quantileMS(pluginLat, 0.5), Unit: "ms",
			Target: "ours: kubectl sessions list --limit 50 -o json, a new client and a full LIST each call"},
	}, nil
}

// timedGateway times calls sessions.list RPCs (limit 50) on a gateway client, after three
// untimed ones; it says what redials the reads needed ("" for none).
func timedGateway(ctx context.Context, g *gateway, calls int) ([]time.Duration, string, error) {
	reads := newRPCReads(func(ctx context.Context) (*rpcClient, error) { return dialGateway(ctx, g) })
	defer reads.close()
	lat, err := timedList(ctx, reads, calls)
	return lat, reads.summary(), err
}

// timedList times calls sessions.list RPCs (limit 50) through reads after three untimed
// ones; a page without its 50 rows fails the figure.
func timedList(ctx context.Context, reads *rpcReads, calls int) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, calls)
	for i := range calls + 3 {
		payload, took, err := reads.read(ctx, "sessions.list", map[string]any{"limit": 50})
		if err != nil {
			return nil, err
		}
		var res struct {
			Sessions []json.RawMessage `json:"sessions"`
		}
		if err := json.Unmarshal(payload, &res); err != nil || len(res.Sessions) != 50 {
			return nil, fmt.Errorf("sessions.list: %d rows (%v): %.200s", len(res.Sessions), err, payload)
		}
		if i >= 3 {
			lat = append(lat, took)
		}
	}
	return lat, nil
}

// createOurSessions creates n more AgentSessions (group sessions of our agent), 16 at a time.
func createOurSessions(ctx context.Context, p *peers, n int) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				key := fmt.Sprintf("agent:%s:webchat:group:l%d", ourAgent, i)
				s := &sessionsv1alpha1.AgentSession{
					ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: peerNS},
					Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: ourAgent, Channel: "webchat", ChatType: sessionsv1alpha1.ChatTypeGroup,
						DisplayName: "group " + strconv.Itoa(i)},
				}
				if err := createRetrying(ctx, p.cl, s); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// seedTheirSessions gives OpenClaw n sessions the way an existing installation brings them:
// a legacy sessions.json of the main agent, imported into its SQLite store by its own
// `doctor --session-sqlite import` while the gateway is stopped.
func seedTheirSessions(install, stateDir, cfgPath string, n int) error {
	dir := filepath.Join(stateDir, "state", "agents", "main", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	rows := make(map[string]any, n)
	for i := range n {
		rows["agent:main:bench-l"+strconv.Itoa(i)] = map[string]any{"sessionId": uuid.NewString(), "updatedAt": now - int64(i)*1000}
	}
	data, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sessions.json"), data, 0o600); err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(install, "bin", "node"), filepath.Join(install, "node_modules", "openclaw", "openclaw.mjs"),
		"doctor", "--session-sqlite", "import", "--session-sqlite-all-agents")
	cmd.Dir = stateDir
	cmd.Env = gatewayEnv(install, stateDir, cfgPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("openclaw doctor --session-sqlite import: %v\n%s", err, out)
	}
	return nil
}
