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

// Package chaos runs the built manager and transcript-store on a local control plane and
// does to them what production does: SIGKILLs at random moments, a restarted API server and
// a misbehaving model provider. Every piece of work must still end, once.
package chaos

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	transcriptclient "github.com/agent-sessions/agent-session-operator/internal/transcript/client"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// attemptTimeout is the manager's model attempt bound here, so a hung provider is cut off
// within the test's time.
const attemptTimeout = "3s"

// env is the cluster every test of the package shares.
type env struct {
	cluster *devcluster.Cluster
	k8s     client.Client
	store   *transcriptclient.Client
}

func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos builds the binaries and starts a control plane")
	}
	testenv.RequireControlPlane(t)
	e := startEnv(t)
	t.Run("provider faults", e.providerFaults)
	t.Run("hostile input", e.hostileInput)
	t.Run("hostile egress and amplification", e.hostileEgress)
	t.Run("remote agents that answer without end", e.endlessRemote)
	t.Run("compaction under a spent budget", e.spentCompaction)
	t.Run("memory through store kills", e.memoryKills)
	t.Run("crashes and restarts", e.crashes)
	t.Run("manager killed between claim and first exec", e.sandboxCrash)
}

func startEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	binDir := t.TempDir()
	build := exec.Command("go", "build", "-o", binDir+"/", "./cmd/manager", "./cmd/transcript-store")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	stateDir := filepath.Join(t.TempDir(), "state")
	// CHAOS_LOG keeps the processes' log at that path after the run (e.g. to count a
	// controller's reconciles); by default it goes with the test's temporary directory.
	logPath := os.Getenv("CHAOS_LOG")
	if logPath == "" {
		logPath = filepath.Join(t.TempDir(), "cluster.log")
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := devcluster.Start(ctx, devcluster.Options{
		RepoRoot: testenv.RepoRoot(), BinDir: binDir, StateDir: stateDir, NoSamples: true, Log: logFile,
		// The suite's own fake providers and sinks listen on 127.0.0.1; the hostile ones on
		// 127.0.0.2, which stays refused like all other loopback addresses.
		ManagerArgs: []string{"--model-attempt-timeout=" + attemptTimeout, "--zap-log-level=info", "--egress-allow=127.0.0.1/32",
			// Sandboxed Agents' tools claim agent-sandbox Sandboxes (sandboxCrash).
			"--sandboxes", "--sandbox-image=example/sandbox:1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cluster.Stop()
		_ = logFile.Close()
		if t.Failed() {
			tailLog(t, logFile.Name())
		}
	})
	k8s, err := client.New(cluster.Config, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return &env{cluster: cluster, k8s: k8s, store: transcriptclient.NewClient(filepath.Join(stateDir, "transcript.sock"))}
}

// tailLog prints the end of the processes' log, where a failure's cause usually is.
func tailLog(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	t.Logf("last lines of %s:\n%s", path, strings.Join(lines[max(0, len(lines)-200):], "\n"))
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

func (e *env) namespace(t *testing.T, name string) string {
	t.Helper()
	if err := e.k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func (e *env) mustCreate(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := e.k8s.Create(context.Background(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// messages is a session's whole transcript.
func (e *env) messages(t *testing.T, s *sessionsv1alpha1.AgentSession) []transcript.Record {
	t.Helper()
	page, err := e.store.Read(context.Background(), s.Namespace, s.Status.SessionID, transcript.ReadOptions{Limit: transcript.MaxLimit, IncludeTools: true})
	if err != nil {
		t.Fatalf("read transcript of %s: %v", s.Spec.Key, err)
	}
	if page.HasMore {
		t.Fatalf("transcript of %s holds more than %d messages", s.Spec.Key, transcript.MaxLimit)
	}
	return page.Messages
}

func text(m transcript.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == transcript.BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// sink is the announce sink: every POST, by idempotency key.
type sink struct {
	*httptest.Server
	mu    sync.Mutex
	posts map[string][]delivery.Message
}

func newSink(t *testing.T) *sink {
	s := &sink{posts: map[string][]delivery.Message{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m delivery.Message
		if err := json.Unmarshal(body, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		s.mu.Lock()
		s.posts[key] = append(s.posts[key], m)
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

// received returns the namespace's posts by idempotency key.
func (s *sink) received(namespace string) map[string][]delivery.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]delivery.Message{}
	for k, ms := range s.posts {
		if ms[0].Namespace == namespace {
			out[k] = append([]delivery.Message(nil), ms...)
		}
	}
	return out
}

// createSessions creates sessions and waits until each has its transcript (and so is in the
// manager's cache, where the admission webhook looks targets up).
func (e *env) createSessions(t *testing.T, sessions ...*sessionsv1alpha1.AgentSession) {
	t.Helper()
	for _, s := range sessions {
		e.mustCreate(t, s)
	}
	for _, s := range sessions {
		e.poll(t, "session "+s.Spec.Key+" ready", func() (bool, error) {
			err := e.k8s.Get(context.Background(), client.ObjectKeyFromObject(s), s)
			return s.Status.SessionID != "", err
		})
	}
}
