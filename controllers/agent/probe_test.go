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

package agent

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools/mcptest"
)

// A namespace's hanging servers hold only its own probe slots: a third Agent of namespace a
// waits for one, an Agent of namespace b is probed meanwhile and its Agent woken.
func TestProbeSlotsArePerNamespace(t *testing.T) {
	hang := mcptest.Hang("127.0.0.1:0")
	t.Cleanup(hang.Close)
	srv := mcptest.New(false)
	t.Cleanup(srv.Close)
	pool := mcptools.NewPool(mcptools.Options{CheckURL: func(context.Context, string, *url.URL) error { return nil }})
	t.Cleanup(pool.Close)
	probes := NewMCPProbes(pool, nil, time.Hour, 2)
	t.Cleanup(probes.stop)

	agent := func(ns, name, u string) *sessionsv1alpha1.Agent {
		a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name), Generation: 1}}
		a.Spec.Tools.MCPServers = []sessionsv1alpha1.MCPServer{{Name: "s", URL: u}}
		return a
	}
	for i := range 3 {
		probes.start(agent("a", fmt.Sprint(i), hang.URL))
	}
	b := agent("b", "b", srv.URL)
	probes.start(b)
	select {
	case ev := <-probes.done:
		if ev.Object.GetNamespace() != "b" {
			t.Fatalf("woken %s/%s first, want b/b", ev.Object.GetNamespace(), ev.Object.GetName())
		}
	case <-t.Context().Done():
		t.Fatal("b was never probed")
	}
	got, ok := probes.result(b)
	if !ok || len(got.servers) != 1 || !got.servers[0].Connected {
		t.Fatalf("b's probe: %+v, %v", got, ok)
	}
	if n := hang.Accepted(); n > 2 {
		t.Errorf("namespace a dialled %d probes at once, its bound is 2", n)
	}
	probes.mu.Lock()
	waiting := probes.slots["a"].users
	probes.mu.Unlock()
	if waiting != 3 {
		t.Errorf("namespace a has %d probes running or waiting, want 3", waiting)
	}
}

func TestProbeResultIsOfOneGeneration(t *testing.T) {
	probes := NewMCPProbes(nil, nil, 0, 0)
	a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "a", UID: "u", Generation: 2}}
	key := types.NamespacedName{Namespace: "n", Name: "a"}
	probes.results[key] = probeResult{uid: "u", generation: 1, servers: []sessionsv1alpha1.MCPServerStatus{{Name: "old"}}}
	if _, ok := probes.result(a); ok {
		t.Fatal("a result of generation 1 was taken for generation 2")
	}
	if _, left := probes.results[key]; left {
		t.Error("the stale result was kept")
	}
}
