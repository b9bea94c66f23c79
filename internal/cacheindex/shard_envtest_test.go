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
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// namespaceOf is the first name "prefix-<i>" that shard index of n owns.
func namespaceOf(prefix string, index, n int) string {
	for i := 0; ; i++ {
		if ns := fmt.Sprintf("%s-%d", prefix, i); shard.Of(ns, n) == index {
			return ns
		}
	}
}

// A shard's caches (its manager's and its store's) hold only its namespaces' sessions, sends
// and runs: objects made before
// the install was sharded are relabelled for their shard, new ones carry the label the
// webhook stamps, and the webhook's reader still finds another shard's objects (from the
// API server).
func TestShardCacheHoldsOnlyItsNamespaces(t *testing.T) {
	cfg, cl := testenv.StartT(t)
	ctx := t.Context()
	s0, s1 := shard.Shard{Index: 0, Count: 2}, shard.Shard{Index: 1, Count: 2}
	mine, theirs := namespaceOf("team", 0, 2), namespaceOf("team", 1, 2)
	objects := func(ns, suffix string) []client.Object {
		key := "agent:main:webchat:group:" + suffix
		return []client.Object{
			&sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s-" + suffix}, Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main"}},
			&sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "send-" + suffix}, Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: "hi"}},
			&sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "run-" + suffix}, Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "main", Task: "t", RequesterSessionKey: key}},
		}
	}
	for _, ns := range []string{mine, theirs} {
		if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		for _, o := range objects(ns, "old") { // made before the install was sharded: no label
			if err := cl.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range []shard.Shard{s0, s1} {
		if n, err := cacheindex.Relabel(ctx, cl, cl, s); err != nil || n != 3 {
			t.Fatalf("relabel %s: %d objects, %v; want its namespace's 3", s, n, err)
		}
	}
	if n, err := cacheindex.Relabel(ctx, cl, cl, s0); err != nil || n != 0 {
		t.Fatalf("relabel again: %d objects, %v; want none", n, err)
	}

	opts := cacheindex.ShardCacheOptions(s0)
	opts.Scheme = scheme.New()
	c, err := cache.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	for _, ns := range []string{mine, theirs} {
		for _, o := range objects(ns, "new") { // as the webhook stamps them
			s0.Stamp(o)
			if err := cl.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	namespaces := func(list client.ObjectList) []string {
		if err := c.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range items {
			out = append(out, o.(client.Object).GetNamespace()+"/"+o.(client.Object).GetName())
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		list  client.ObjectList
		names []string
	}{
		{&sessionsv1alpha1.AgentSessionList{}, []string{mine + "/s-new", mine + "/s-old"}},
		{&sessionsv1alpha1.SessionSendList{}, []string{mine + "/send-new", mine + "/send-old"}},
		{&sessionsv1alpha1.SubagentRunList{}, []string{mine + "/run-new", mine + "/run-old"}},
	} {
		var got []string
		err := wait.PollUntilContextTimeout(ctx, testenv.Interval, testenv.Timeout, true, func(context.Context) (bool, error) {
			got = namespaces(tc.list)
			return slices.Equal(got, tc.names), nil
		})
		if err != nil {
			t.Errorf("shard 0's cache of %T holds %v, want %v only", tc.list, got, tc.names)
		}
	}

	// The transcript-store of shard 0 caches its namespaces' sessions only, as its manager.
	ro := cacheindex.ReaderCacheOptions(s0)
	ro.Scheme = scheme.New()
	rc, err := cache.New(cfg, ro)
	if err == nil { // it reads no kind whose informer it was not asked for
		_, err = rc.GetInformer(ctx, &sessionsv1alpha1.AgentSession{})
	}
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = rc.Start(ctx) }()
	var got []string
	err = wait.PollUntilContextTimeout(ctx, testenv.Interval, testenv.Timeout, true, func(context.Context) (bool, error) {
		var l sessionsv1alpha1.AgentSessionList
		if err := rc.List(ctx, &l); err != nil {
			return false, nil //nolint:nilerr // not synced yet
		}
		got = got[:0]
		for _, s := range l.Items {
			got = append(got, s.Namespace+"/"+s.Name)
		}
		slices.Sort(got)
		return slices.Equal(got, []string{mine + "/s-new", mine + "/s-old"}), nil
	})
	if err != nil {
		t.Errorf("shard 0's store caches sessions %v, want its namespace's only", got)
	}

	// The webhook answers for every namespace: its reader finds another shard's session.
	r := cacheindex.ShardClient(cl, cl, s0)
	var s sessionsv1alpha1.AgentSession
	if err := c.Get(ctx, client.ObjectKey{Namespace: theirs, Name: "s-new"}, &s); err == nil {
		t.Error("shard 0's cache holds a session of shard 1's namespace")
	}
	if err := r.Get(ctx, client.ObjectKey{Namespace: theirs, Name: "s-new"}, &s); err != nil {
		t.Errorf("the webhook's reader misses shard 1's session: %v", err)
	}
}
