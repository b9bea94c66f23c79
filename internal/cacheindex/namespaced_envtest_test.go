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

package cacheindex_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// On the manager's informer cache a namespaced lookup by index finds the namespace's object
// only, and the index holds no all-namespaces copy of any value.
func TestIndexesAreNamespacedOnly(t *testing.T) {
	cfg, cl := testenv.StartT(t)
	ctx := t.Context()
	const key = "agent:main:main"
	for _, ns := range []string{"team", "other"} {
		if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		if err := cl.Create(ctx, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "main-" + ns},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main"}}); err != nil {
			t.Fatal(err)
		}
	}
	c := testenv.ManagerCacheT(t, cfg, cacheindex.SetupReaders)

	for _, ns := range []string{"team", "other"} {
		var got sessionsv1alpha1.AgentSessionList
		err := wait.PollUntilContextTimeout(ctx, testenv.Interval, testenv.Timeout, true, func(ctx context.Context) (bool, error) {
			err := c.List(ctx, &got, client.InNamespace(ns), client.MatchingFields{cacheindex.SessionKey: key})
			return len(got.Items) > 0, err
		})
		if err != nil || len(got.Items) != 1 || got.Items[0].Name != "main-"+ns {
			t.Fatalf("session %q in %s: got %d items (%v), want main-%s", key, ns, len(got.Items), err, ns)
		}
	}
	inf, err := c.GetInformer(ctx, &sessionsv1alpha1.AgentSession{})
	if err != nil {
		t.Fatal(err)
	}
	values := inf.(toolscache.SharedIndexInformer).GetIndexer().ListIndexFuncValues("field:" + cacheindex.SessionKey)
	slices.Sort(values)
	if want := []string{"other/" + key, "team/" + key}; !slices.Equal(values, want) {
		t.Fatalf("index %s holds %v, want %v", cacheindex.SessionKey, values, want)
	}
	for _, v := range values {
		if strings.HasPrefix(v, "__all_namespaces/") {
			t.Fatalf("index %s keeps an all-namespaces copy: %s", cacheindex.SessionKey, v)
		}
	}
}
