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

package transcriptstore

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The sidecar's cache fits its memory limit: it holds sessions without their annotations and
// no sends or runs at all, while /events still hears of every run's changes; a send's come
// from the manager (sendchanges_test.go): the store watches no sends.
func TestSidecarCachesNoSendsOrRunsYetPublishesRuns(t *testing.T) {
	cfg, cl := testenv.StartT(t)
	ctx := t.Context()
	hub := events.NewHub(64, "e")
	sub := hub.Subscribe("")
	defer sub.Close()
	// Every request the store makes as itself, to show it never asks for sends: its
	// ServiceAccount's role grants none (config/rbac/history_auth_role.yaml).
	var asked sync.Map
	scfg := rest.CopyConfig(cfg)
	scfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			asked.Store(r.Method+" "+r.URL.Path, true)
			return rt.RoundTrip(r)
		})
	})
	c, err := WatchObjects(ctx, scfg, hub, shard.Shard{}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	key := "agent:main:webchat:group:g"
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "g",
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"}},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main", ChatType: sessionsv1alpha1.ChatTypeGroup}}
	send := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello"},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: "hi", TimeoutSeconds: ptr.To[int32](0)}}
	run := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "task"},
		Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "main", Task: "t", RequesterSessionKey: key}}
	for _, o := range []client.Object{s, send, run} {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	run.Status.Phase = sessionsv1alpha1.RunSucceeded
	if err := cl.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}

	// Each watched kind's change reaches the hub; the run's finishing one too.
	want := map[string]bool{"sessions.changed created": false, "runs.changed created": false,
		"runs.changed updated Succeeded": false}
	deadline := time.After(testenv.Timeout)
	for missing := len(want); missing > 0; {
		select {
		case e := <-sub.C:
			var seen string
			switch {
			case bytes.Contains(e.Data, []byte(`"phase":"updated"`)) && bytes.Contains(e.Data, []byte(`Succeeded`)):
				seen = e.Kind + " updated Succeeded"
			case bytes.Contains(e.Data, []byte(`"phase":"created"`)):
				seen = e.Kind + " created"
			}
			if e.Kind == events.KindSendsChanged {
				t.Fatalf("the store published a send's change of its own: %s", e.Data)
			}
			if done, ok := want[seen]; ok && !done {
				want[seen] = true
				missing--
			}
		case <-deadline:
			t.Fatalf("events seen: %v", want)
		}
	}

	asked.Range(func(k, _ any) bool {
		if strings.Contains(k.(string), "/sessionsends") {
			t.Errorf("the store asked the API server for sends itself: %s", k)
		}
		return true
	})

	var got sessionsv1alpha1.AgentSession
	if err := c.Get(ctx, client.ObjectKeyFromObject(s), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Annotations) != 0 || got.Spec.Key != key {
		t.Errorf("the cached session keeps its annotations (%v) or lost its key (%q)", got.Annotations, got.Spec.Key)
	}
	for _, o := range []client.Object{&sessionsv1alpha1.SessionSend{}, &sessionsv1alpha1.SubagentRun{}} {
		var notCached *cache.ErrResourceNotCached
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "hello"}, o); !errors.As(err, &notCached) {
			t.Errorf("%T read from the sidecar's cache: %v, want ErrResourceNotCached (it caches none)", o, err)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
