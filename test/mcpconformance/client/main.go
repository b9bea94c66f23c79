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
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
)

// calls are the tool calls each scenario expects after initialize and tools/list.
var calls = map[string][]struct{ tool, args string }{
	"initialize": nil,
	"tools_call": {{"add_numbers", `{"a":5,"b":3}`}},
	"sse-retry":  {{"test_reconnection", `{}`}},
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
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	want, ok := calls[scenario]
	if !ok {
		return fmt.Errorf("scenario %q is not supported", scenario)
	}
	timeout := int32(20)
	agent := &v1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "conformance", Name: "client", Generation: 1},
		Spec: v1.AgentSpec{Tools: v1.ToolsSpec{MCPServers: []v1.MCPServer{
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
