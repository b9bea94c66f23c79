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

// Command client drives the manager's MCP client (internal/mcptools) for the official MCP
// conformance suite: the suite starts a test server for a scenario, runs this command with
// the server's URL as the last argument and the scenario in MCP_CONFORMANCE_SCENARIO, and
// judges what the client did on the wire.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
)

type call struct{ tool, args string }

// calls are the tool calls scenarios of the 0.1.16 suite expect after initialize and
// tools/list. The newer suite names its calls in MCP_CONFORMANCE_CONTEXT; any other
// scenario gets the handshake and the listing, which is all the manager does unasked.
var calls = map[string][]call{
	"tools_call": {{"add_numbers", `{"a":5,"b":3}`}},
	"sse-retry":  {{"test_reconnection", `{}`}},
	// One valid tool among malformed ones (SEP-2243) must stay callable.
	"http-invalid-tool-headers": {{"valid_tool", `{"region":"us-west1"}`}},
}

// echoes name, per scenario, a tool whose input schema, as the manager keeps it for the
// model, is sent back to another tool: json-schema-2020-12-preservation checks that
// nothing in the schema was lost.
var echoes = map[string]struct{ of, to string }{
	"json-schema-2020-12-preservation": {"json_schema_2020_12_tool", "json_schema_echo"},
}

// contextCalls are the tool calls the suite's MCP_CONFORMANCE_CONTEXT names.
func contextCalls() ([]call, error) {
	raw := os.Getenv("MCP_CONFORMANCE_CONTEXT")
	if raw == "" {
		return nil, nil
	}
	var ctx struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(raw), &ctx); err != nil {
		return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	var out []call
	for _, c := range ctx.ToolCalls {
		out = append(out, call{c.Name, string(c.Arguments)})
	}
	return out, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return fmt.Errorf("usage: %s <server-url>", os.Args[0])
	}
	more, err := contextCalls()
	if err != nil {
		return err
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	want := append(calls[scenario], more...)
	timeout := int32(20)
	agent := &sessionsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "conformance", Name: "client", Generation: 1},
		Spec: sessionsv1alpha1.AgentSpec{Tools: sessionsv1alpha1.ToolsSpec{MCPServers: []sessionsv1alpha1.MCPServer{
			{Name: "conformance", URL: os.Args[len(os.Args)-1], TimeoutSeconds: &timeout},
		}}},
	}
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	set := pool.Resolve(ctx, agent)
	st := set.Status()[0]
	if !st.Connected {
		return fmt.Errorf("initialize: %s", st.Message)
	}
	fmt.Printf("connected, %d tools\n", st.Tools)
	if e, ok := echoes[scenario]; ok {
		for _, tl := range set.Tools() {
			if tl.Remote == e.of {
				want = append(want, call{e.to, `{"schema":` + string(tl.Schema) + `}`})
			}
		}
	}
	for _, c := range want {
		name := mcptools.ToolName("conformance", c.tool)
		res := set.Call(ctx, name, []byte(c.args))
		fmt.Printf("%s: isError=%v %s\n", name, res.IsError, res.Text)
		if res.IsError {
			return fmt.Errorf("%s failed: %s", c.tool, res.Text)
		}
	}
	return nil
}
