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

package mcpserver

import (
	"context"
	"slices"
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/user"
	toolscache "k8s.io/client-go/tools/cache"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// On a real informer cache ListSessions reads the namespace index: the namespace's sessions
// as the cache holds them, and no other namespace's.
func TestListSessionsFromAnInformerCache(t *testing.T) {
	cfg, cl := testenv.StartT(t)
	ctx := t.Context()
	for _, ns := range []string{"team", "other"} {
		if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{ns + "-a", ns + "-b"} {
			if err := cl.Create(ctx, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:webchat:group:" + name, AgentID: "main", ChatType: sessionsv1alpha1.ChatTypeGroup}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := testenv.ManagerCacheT(t, cfg, nil)
	inf, err := c.GetInformer(ctx, &sessionsv1alpha1.AgentSession{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := inf.(toolscache.SharedIndexInformer); !ok {
		t.Fatalf("the cache's informer is a %T: ListSessions would never read its index", inf)
	}
	r := sessionsReader{cache: c, user: &user.DefaultInfo{Name: "alice"},
		check: func(context.Context, user.Info, authzv1.ResourceAttributes) error { return nil }}
	var names []string
	err = wait.PollUntilContextTimeout(ctx, testenv.Interval, testenv.Timeout, true, func(ctx context.Context) (bool, error) {
		got, err := r.ListSessions(ctx, "team")
		names = names[:0]
		for _, s := range got {
			names = append(names, s.Name)
		}
		slices.Sort(names)
		return slices.Equal(names, []string{"team-a", "team-b"}), err
	})
	if err != nil {
		t.Fatalf("ListSessions(team) = %v (%v), want team-a and team-b", names, err)
	}
	// The cache's own objects, not copies: two lists hand out the same pointers, through the
	// sidecar's reader and on the manager's cache (the agents' sessions_list).
	first, _ := r.ListSessions(ctx, "team")
	again, err := sessiontools.ListSessions(ctx, c, "team")
	if err != nil || len(first) != 2 || len(again) != 2 || !slices.Contains(again, first[0]) || !slices.Contains(again, first[1]) {
		t.Fatalf("two lists returned different objects: %v %v (%v)", first, again, err)
	}
}
