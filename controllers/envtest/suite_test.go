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

// Package envtest runs the controllers against a real API server: a manager with the real
// turn engine on the scripted provider, transcripts in a FileStore on disk, and an
// in-test HTTP sink for announce deliveries.
package envtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	transcriptstore "github.com/agent-sessions/agent-session-operator/internal/transcript/store"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/agent-sessions/agent-session-operator/controllers"
	"github.com/agent-sessions/agent-session-operator/controllers/managertest"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/delivery/chatfake"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

var (
	suite     *managertest.Suite
	env       *envtest.Environment
	cfg       *rest.Config
	k8s       client.Client
	ctx       = context.Background()
	fakeClock *clocktesting.FakeClock
	// sendChanges records what the manager hands the store of its SessionSends.
	sendChanges = &feedRecorder{}
	// hookKeys records the SessionHook keys the manager hands the store.
	hookKeys = &keyRecorder{}
	dataDir  string
	store    *transcriptstore.FileStore
	sink     *sinkServer
	// discord is a local Discord-shaped API the suite's chat sinks post to (chat_sink_test.go).
	discord *chatPlatform
	// writes counts the manager's writes per resource (POST, PUT, PATCH, DELETE).
	writes sync.Map
	// engine is the running manager's turn engine; calls sees every model call it makes.
	engine *turns.Engine
	// mgrCache is the running manager's informer cache.
	mgrCache cache.Cache
	calls    = &modelCalls{}
	// engineStatusWrites counts the status writes the engine's client was asked for: none,
	// the controllers are the only writers of status (one_writer_test.go).
	engineStatusWrites atomic.Int64
)

func TestControllers(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "controllers suite")
}

var _ = BeforeSuite(func() {
	fakeClock = clocktesting.NewFakeClock(time.Now())
	sink = newSink()
	discord = newChatPlatform(chatfake.Discord)
	// Model stubs listen on loopback (protocol_test.go); MCP servers stay refused but for
	// mcpHost.
	allowLoopback, err := egress.Parse([]string{"127.0.0.1/32"}, false)
	Expect(err).NotTo(HaveOccurred())
	suite = managertest.Start(managertest.Options{
		Clock: fakeClock, Wrap: func(rt http.RoundTripper) http.RoundTripper { return countWrites{rt} },
		MCPHost: mcpHost, WorkspaceTools: true, Sink: sink.URL,
		Engine: func(o *turns.Options) {
			o.Client, o.NewProvider, o.Egress = noStatusWrites{o.Client}, calls.wrap, allowLoopback
		},
		Controllers: func(o *controllers.Options) {
			// The webhook sink and the Discord-shaped API, nothing else.
			allowSinks, err := egress.Parse([]string{sink.URL + "/", discord.URL}, false)
			Expect(err).NotTo(HaveOccurred())
			o.Deliverer = delivery.New(allowSinks)
			o.Deliverer.Backoff, o.Deliverer.MaxWait = time.Millisecond, time.Millisecond
			o.TTLAfterFinished, o.MCPProbeTimeout = suiteTTL, suiteProbeTimeout
			o.SendFeed, o.HookKeys = sendChanges, hookKeys
		},
	})
	env, cfg, k8s, dataDir = suite.Env, suite.Config, suite.Client, suite.DataDir
	useManager()
})

var _ = AfterSuite(func() {
	stopManager()
	Expect(engineStatusWrites.Load()).To(BeZero(), "status writes asked of the turn engine's client")
	if sink != nil {
		sink.Close()
	}
	suite.Stop()
})

// startManager runs a manager like cmd/manager does, with the fake clock and the suite's
// store; stopManager ends it as a SIGTERM would.
func startManager() {
	suite.StartManager()
	useManager()
}

func stopManager() { suite.StopManager() }

// useManager points the suite's variables at the running manager's parts.
func useManager() {
	store, engine, mgrCache = suite.Manager.Store, suite.Manager.Engine, suite.Manager.GetCache()
}

// mcpHost is the one loopback address the suite lets MCP servers listen on.
const mcpHost = "127.0.0.2"

// suiteProbeTimeout is the manager's --mcp-probe-timeout here: longer than any Eventually
// window, so a spec passes only if no Agent waits for another's probe to time out.
const suiteProbeTimeout = 5 * testenv.Timeout

// suiteTTL is the manager's --ttl-after-finished here: a day, as its default, on the fake
// clock; the TTL specs step past it.
const suiteTTL = 24 * time.Hour

type countWrites struct{ rt http.RoundTripper }

func (c countWrites) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
		// .../namespaces/<ns>/<resource>[/<name>[/<subresource>]]
		for i := 0; i+2 < len(parts); i++ {
			if parts[i] == "namespaces" {
				n, _ := writes.LoadOrStore(parts[i+2], new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
				break
			}
		}
	}
	return c.rt.RoundTrip(req)
}

func writesTo(resource string) int64 {
	n, ok := writes.Load(resource)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// sinkServer is the announce sink: it records every POST by idempotency key.
type sinkServer struct {
	*httptest.Server
	mu    sync.Mutex
	posts map[string][]delivery.Message
	// auth is the Authorization header of each post, by idempotency key.
	auth map[string]string
}

func newSink() *sinkServer {
	s := &sinkServer{posts: map[string][]delivery.Message{}, auth: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m delivery.Message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.posts[r.Header.Get("Idempotency-Key")] = append(s.posts[r.Header.Get("Idempotency-Key")], m)
		s.auth[r.Header.Get("Idempotency-Key")] = r.Header.Get("Authorization")
		s.mu.Unlock()
	}))
	return s
}

// received returns the messages posted for a session, once per idempotency key.
func (s *sinkServer) received(namespace, sessionKey string) []delivery.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []delivery.Message
	for _, ms := range s.posts {
		if ms[0].Namespace == namespace && ms[0].SessionKey == sessionKey {
			out = append(out, ms[0])
		}
	}
	return out
}

// authorization is the Authorization header the post with the idempotency key carried.
func (s *sinkServer) authorization(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth[key]
}
