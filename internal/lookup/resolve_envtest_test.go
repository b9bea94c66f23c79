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

package lookup_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// Against a real API server and the manager's cache: a session named by its key is found by
// name and costs the key index nothing; one named otherwise is found by the index, also when
// another session squats the name its key would have; a sessionId is found by the API
// server's selectable field.
func TestResolveSessionByNameIndexAndSessionID(t *testing.T) {
	cfg, cl := testenv.StartT(t)
	ctx := t.Context()
	const ns = "team"
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	const (
		named    = "agent:ops:main"      // named sessionkey.ObjectName(key)
		custom   = "agent:main:main"     // named "my-session"
		squatted = "agent:research:main" // its conventional name is taken by squatter
		squatter = "agent:research:work" // named sessionkey.ObjectName(squatted)
	)
	sessions := map[string]string{ // key -> object name
		named: sessionkey.ObjectName(named), custom: "my-session",
		squatted: "research-main", squatter: sessionkey.ObjectName(squatted),
	}
	for key, name := range sessions {
		s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: sessionkey.AgentOf(key)}}
		if err := cl.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		s.Status.SessionID = "sid-" + name
		if err := cl.Status().Update(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	c := testenv.ManagerCacheT(t, cfg, cacheindex.Setup)
	// Cache is the cache alone: a hit is the cache's, not the API confirm's.
	fromCache, full := lookup.New(c, nil), lookup.New(c, cl)
	for key, name := range sessions {
		var got *sessionsv1alpha1.AgentSession
		err := wait.PollUntilContextTimeout(ctx, testenv.Interval, testenv.Timeout, true, func(ctx context.Context) (bool, error) {
			var err error
			got, err = fromCache.SessionByKey(ctx, ns, key)
			return got != nil && got.Status.SessionID != "", err
		})
		if err != nil || got.Name != name {
			t.Fatalf("key %s: got %v (%v), want the session named %s", key, got, err, name)
		}
		byID, err := full.ResolveSession(ctx, ns, "sid-"+name, "")
		if err != nil || byID == nil || byID.Name != name {
			t.Fatalf("sessionId sid-%s: got %v (%v), want the session named %s", name, byID, err, name)
		}
	}
	if s, err := full.ResolveSession(ctx, ns, "sid-nobody", ""); s != nil || err != nil {
		t.Fatalf("an unknown sessionId resolved to %v (%v)", s, err)
	}

	inf, err := c.GetInformer(ctx, &sessionsv1alpha1.AgentSession{})
	if err != nil {
		t.Fatal(err)
	}
	indexed := inf.(toolscache.SharedIndexInformer).GetIndexer().ListIndexFuncValues("field:" + cacheindex.SessionKey)
	slices.Sort(indexed)
	if want := []string{ns + "/" + custom, ns + "/" + squatted, ns + "/" + squatter}; !slices.Equal(indexed, want) {
		t.Fatalf("the key index holds %v, want only the sessions not named by their key: %v", indexed, want)
	}
}
