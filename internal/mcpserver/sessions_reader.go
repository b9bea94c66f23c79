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

	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// sessionsReader reads AgentSessions from the sidecar's informer cache once the caller is
// allowed the same get or list on the API server, and everything else as the caller: the
// sidecar caches no SessionSends or SubagentRuns (100,000 finished ones would not fit its
// memory), which are read by selectable fields, a page at a time. A namespace of 10,000 sessions is then one map lookup and a
// walk of the cache per call instead of a full LIST through impersonation; a miss is still
// confirmed by the API server (the tools' APIReader is the caller's own client).
type sessionsReader struct {
	client.WithWatch
	cache client.Reader
	user  user.Info
	check func(ctx context.Context, u user.Info, attrs authzv1.ResourceAttributes) error
}

// cachedResource is the resource of the kind the cache holds, by object or list.
func cachedResource(o any) (string, bool) {
	switch o.(type) {
	case *sessionsv1alpha1.AgentSession, *sessionsv1alpha1.AgentSessionList:
		return "agentsessions", true
	}
	return "", false
}

func (r sessionsReader) attrs(resource, verb, namespace, name string) authzv1.ResourceAttributes {
	return authzv1.ResourceAttributes{Verb: verb, Group: sessionsv1alpha1.GroupVersion.Group, Resource: resource,
		Namespace: namespace, Name: name}
}

func (r sessionsReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	res, ok := cachedResource(obj)
	if !ok {
		return r.WithWatch.Get(ctx, key, obj, opts...)
	}
	if err := r.check(ctx, r.user, r.attrs(res, "get", key.Namespace, key.Name)); err != nil {
		return err
	}
	return r.cache.Get(ctx, key, obj, opts...)
}

func (r sessionsReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	res, ok := cachedResource(list)
	if !ok {
		return r.WithWatch.List(ctx, list, opts...)
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	if err := r.check(ctx, r.user, r.attrs(res, "list", o.Namespace, "")); err != nil {
		return err
	}
	return r.cache.List(ctx, list, opts...)
}

// newestOrder is a cache that also keeps each namespace's sessions newest first.
type newestOrder interface {
	Newest(namespace string, yield func(*sessionsv1alpha1.AgentSession) bool)
}

// NewestSessions walks namespace's sessions newest first (sessiontools.NewestLister) when the
// cache keeps that order, once the caller may list them.
func (r sessionsReader) NewestSessions(ctx context.Context, namespace string, yield func(*sessionsv1alpha1.AgentSession) bool) (bool, error) {
	n, ok := r.cache.(newestOrder)
	if !ok {
		return false, nil
	}
	if err := r.check(ctx, r.user, r.attrs("agentsessions", "list", namespace, "")); err != nil {
		return false, err
	}
	n.Newest(namespace, yield)
	return true, nil
}

// ListSessions lists namespace's sessions as the cache holds them (sessiontools.SessionLister),
// once the caller may list them.
func (r sessionsReader) ListSessions(ctx context.Context, namespace string) ([]*sessionsv1alpha1.AgentSession, error) {
	if err := r.check(ctx, r.user, r.attrs("agentsessions", "list", namespace, "")); err != nil {
		return nil, err
	}
	return sessiontools.ListSessions(ctx, r.cache, namespace)
}
