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
	"errors"
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
)

// The cache holds every namespace's sessions; only what the caller may read comes out of it.
func TestSessionsReaderAsksBeforeReadingTheCache(t *testing.T) {
	ctx := context.Background()
	session := func(ns, name string) *sessionsv1alpha1.AgentSession {
		return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	cache := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithObjects(session("team", "s1"), session("other", "s2"),
			&sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "send-1"}}).Build()
	own := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithObjects(&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "x"}}).Build()
	var asked []authzv1.ResourceAttributes
	r := sessionsReader{WithWatch: own, cache: cache, user: &user.DefaultInfo{Name: "alice"},
		check: func(_ context.Context, u user.Info, a authzv1.ResourceAttributes) error {
			asked = append(asked, a)
			if u.GetName() == "alice" && a.Namespace == "team" {
				return nil
			}
			return apierrors.NewForbidden(schema.GroupResource{Group: a.Group, Resource: a.Resource}, a.Name, errors.New("no RBAC rule"))
		}}

	var l sessionsv1alpha1.AgentSessionList
	if err := r.List(ctx, &l, client.InNamespace("team")); err != nil || len(l.Items) != 1 || l.Items[0].Name != "s1" {
		t.Errorf("list team = %v, %d items; want s1 from the cache", err, len(l.Items))
	}
	if err := r.List(ctx, &l, client.InNamespace("other")); !apierrors.IsForbidden(err) {
		t.Errorf("list other = %v, want forbidden", err)
	}
	var s sessionsv1alpha1.AgentSession
	if err := r.Get(ctx, client.ObjectKey{Namespace: "other", Name: "s2"}, &s); !apierrors.IsForbidden(err) {
		t.Errorf("get other/s2 = %v, want forbidden", err)
	}
	if err := r.Get(ctx, client.ObjectKey{Namespace: "team", Name: "s1"}, &s); err != nil {
		t.Errorf("get team/s1 = %v, want it from the cache", err)
	}
	want := []authzv1.ResourceAttributes{
		{Verb: "list", Namespace: "team"}, {Verb: "list", Namespace: "other"},
		{Verb: "get", Namespace: "other", Name: "s2"}, {Verb: "get", Namespace: "team", Name: "s1"},
	}
	if len(asked) != len(want) {
		t.Fatalf("asked %d questions, want %d: %+v", len(asked), len(want), asked)
	}
	for i, w := range want {
		a := asked[i]
		if a.Verb != w.Verb || a.Namespace != w.Namespace || a.Name != w.Name || a.Resource != "agentsessions" || a.Group != sessionsv1alpha1.GroupVersion.Group {
			t.Errorf("question %d = %+v, want %+v on agentsessions", i, a, w)
		}
	}
	// Sends and runs are read as the caller: the store caches none (its memory limit).
	var sends sessionsv1alpha1.SessionSendList
	if err := r.List(ctx, &sends, client.InNamespace("team")); err != nil || len(sends.Items) != 0 {
		t.Errorf("sends list = %v, %d items; want the caller's own read, which holds none", err, len(sends.Items))
	}
	if len(asked) != len(want) {
		t.Errorf("reading sends asked a question of the cache: %+v", asked[len(want):])
	}
	// Other kinds are read as the caller, without a question.
	var agents sessionsv1alpha1.AgentList
	if err := r.List(ctx, &agents, client.InNamespace("other")); err != nil || len(agents.Items) != 1 {
		t.Errorf("agents list = %v, %d items; want the caller's own read", err, len(agents.Items))
	}
	if len(asked) != len(want) {
		t.Errorf("reading agents asked a question: %+v", asked[len(want):])
	}
}

// The list behind sessions_list asks the same question as a List, and reads the cache.
func TestListSessionsAsksFirst(t *testing.T) {
	ctx := context.Background()
	cache := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		&sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "s1"}},
		&sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "s2"}}).Build()
	r := sessionsReader{WithWatch: cache, cache: cache, user: &user.DefaultInfo{Name: "alice"},
		check: func(_ context.Context, _ user.Info, a authzv1.ResourceAttributes) error {
			if a.Namespace == "team" && a.Verb == "list" && a.Resource == "agentsessions" {
				return nil
			}
			return apierrors.NewForbidden(schema.GroupResource{Group: a.Group, Resource: a.Resource}, a.Name, errors.New("no RBAC rule"))
		}}
	got, err := r.ListSessions(ctx, "team")
	if err != nil || len(got) != 1 || got[0].Name != "s1" {
		t.Errorf("ListSessions(team) = %d sessions, %v; want s1", len(got), err)
	}
	if _, err := r.ListSessions(ctx, "other"); !apierrors.IsForbidden(err) {
		t.Errorf("ListSessions(other) = %v, want forbidden", err)
	}
}
