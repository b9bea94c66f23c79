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

// Package approval runs tool calls that wait for a person through the whole manager:
// controllers, the turn engine on the scripted provider with a real MCP server, and the
// admission webhooks behind a real API server, the manager speaking as its own user and the
// approvers as theirs (client certificates), so every decision goes the real admission path.
// The same whole manager runs what else a person decides there (spec_test.go): a /send
// on|off|inherit, and a send whose target chose not to reply.
package approval

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/agent-sessions/agent-session-operator/controllers/managertest"
	"github.com/agent-sessions/agent-session-operator/controllers/toolapproval"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	transcriptstore "github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// mcpHost is the one loopback address the manager's egress policy lets MCP servers use.
const mcpHost = "127.0.0.2"

// maxTurns is the engine's bound here: far below the number of turns that wait at once in
// the spec that checks a waiting turn holds no slot.
const maxTurns = 8

var (
	suite     *managertest.Suite
	env       *envtest.Environment
	cfg       *rest.Config
	k8s       client.Client
	ctx       = context.Background()
	fakeClock *clocktesting.FakeClock
	store     *transcriptstore.FileStore
	engine    *turns.Engine
	// sink is the chat bridge of the webchat channel: it keeps every message posted to it.
	sink     *httptest.Server
	sinkMu   sync.Mutex
	sinkMsgs []delivery.Message
)

// posted are the messages the sink received.
func posted() []delivery.Message {
	sinkMu.Lock()
	defer sinkMu.Unlock()
	return slices.Clone(sinkMsgs)
}

func TestApproval(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "approval suite")
}

var _ = BeforeSuite(func() {
	fakeClock = clocktesting.NewFakeClock(time.Now())
	sink = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m delivery.Message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sinkMu.Lock()
		sinkMsgs = append(sinkMsgs, m)
		sinkMu.Unlock()
	}))
	DeferCleanup(sink.Close)
	toolapproval.RegisterMetrics(metrics.Registry) // approvals() reads them, as the manager's main serves them
	// The manager speaks as its own user and the approvers as theirs (approval_test.go).
	suite = managertest.Start(managertest.Options{Webhooks: true, Clock: fakeClock, MCPHost: mcpHost, Sink: sink.URL,
		Engine: func(o *turns.Options) { o.MaxConcurrentTurns = maxTurns }})
	env, cfg, k8s = suite.Env, suite.Config, suite.Client
	useManager()
})

var _ = AfterSuite(func() { suite.Stop() })

// startManager runs a manager as cmd/manager does, on the suite's clock and store (a second
// call after stopManager is a restart: the same transcripts, a new engine and caches).
func startManager() {
	suite.StartManager()
	useManager()
}

// stopManager ends the manager as a SIGTERM would.
func stopManager() { suite.StopManager() }

// useManager points the suite's variables at the running manager's parts.
func useManager() { store, engine = suite.Manager.Store, suite.Manager.Engine }
