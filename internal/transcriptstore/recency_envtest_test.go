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
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The sidecar's cache walks a namespace's sessions newest first, following status updates
// and deletes the API server makes, and never another namespace's.
func TestSidecarCacheWalksSessionsNewestFirst(t *testing.T) {
	cfg, cl := testenv.StartT(t)
	ctx := t.Context()
	c, err := WatchObjects(ctx, cfg, events.NewHub(16, "e"), shard.Shard{}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	walker, ok := c.(interface {
		Newest(string, func(*sessionsv1alpha1.AgentSession) bool)
	})
	if !ok {
		t.Fatalf("the sidecar's cache %T keeps no order: sessions_list would walk every session", c)
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, ns := range []string{"team", "other"} {
		if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(ns, name string, minutes int) *sessionsv1alpha1.AgentSession {
		s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:webchat:group:" + name, AgentID: "main", ChatType: sessionsv1alpha1.ChatTypeGroup}}
		if err := cl.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		at := metav1.NewTime(base.Add(time.Duration(minutes) * time.Minute))
		s.Status.UpdatedAt = &at
		if err := cl.Status().Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	put("team", "a", 1)
	b := put("team", "b", 3)
	put("team", "c", 2)
	put("other", "z", 9)
	// b is updated older than a, and c is deleted.
	at := metav1.NewTime(base)
	b.Status.UpdatedAt = &at
	if err := cl.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := cl.Delete(ctx, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "c"}}); err != nil {
		t.Fatal(err)
	}
	var names []string
	err = wait.PollUntilContextTimeout(ctx, testenv.Interval, testenv.Timeout, true, func(context.Context) (bool, error) {
		names = names[:0]
		walker.Newest("team", func(s *sessionsv1alpha1.AgentSession) bool { names = append(names, s.Name); return true })
		return slices.Equal(names, []string{"a", "b"}), nil
	})
	if err != nil {
		t.Fatalf("team newest first = %v, want [a b]", names)
	}
}
