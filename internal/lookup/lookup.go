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

// Package lookup finds the objects controllers, webhook and runtime resolve by name: a
// session by key, sessionId or the alias main, an Agent, the namespace's SessionPolicy. Each
// reads the manager's cache and confirms a miss with the API server, since an object applied
// together with the one that names it may not be cached yet. Missing is (nil, nil).
package lookup

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// PolicyName is the name of a namespace's one SessionPolicy.
const PolicyName = "default"

// Lookup reads from Cache (the manager's informer cache, with cacheindex's indexes) and
// confirms a miss with API (an uncached reader). Every method returns (nil, nil) for an
// object that does not exist, and an error only when a read failed.
type Lookup struct {
	Cache client.Reader
	// API confirms cache misses; nil confirms nothing (unit tables with one fake client).
	API client.Reader
}

// New returns a Lookup.
func New(cache, api client.Reader) Lookup { return Lookup{Cache: cache, API: api} }

// SessionByKey is the session with key. Sessions are named sessionkey.ObjectName(key), so a
// cache miss is confirmed with one Get of that name.
func (l Lookup) SessionByKey(ctx context.Context, namespace, key string) (*sessionsv1alpha1.AgentSession, error) {
	s, err := SessionByKey(ctx, l.Cache, namespace, key)
	if s != nil || err != nil || l.API == nil {
		return s, err
	}
	return namedByKey(ctx, l.API, namespace, key)
}

// live is the reader that confirms a cache miss: the API server, or the cache in unit tables.
func (l Lookup) live() client.Reader {
	if l.API == nil {
		return l.Cache
	}
	return l.API
}

// ResolveSession finds the session ref names: a key, the alias main (or global) of
// requesterAgent, or a sessionId. A sessionId is asked of the API server (status.sessionId
// is a selectable field): the cache keeps no index of it, and a ref that is not a key is rare.
func (l Lookup) ResolveSession(ctx context.Context, namespace, ref, requesterAgent string) (*sessionsv1alpha1.AgentSession, error) {
	s, err := l.SessionByKey(ctx, namespace, sessionkey.Resolve(ref, requesterAgent))
	if s != nil || err != nil {
		return s, err
	}
	return SessionByID(ctx, l.live(), namespace, ref)
}

// Agent is the Agent named id.
func (l Lookup) Agent(ctx context.Context, namespace, id string) (*sessionsv1alpha1.Agent, error) {
	return Agent(ctx, l.Cache, l.live(), namespace, id)
}

// SessionPolicy is the namespace's SessionPolicy; nil when there is none, which callers
// read as the zero policy (every field at its default).
func (l Lookup) SessionPolicy(ctx context.Context, namespace string) (*sessionsv1alpha1.SessionPolicy, error) {
	p := &sessionsv1alpha1.SessionPolicy{}
	key := types.NamespacedName{Namespace: namespace, Name: PolicyName}
	err := l.Cache.Get(ctx, key, p)
	if notFound(err) && l.API != nil {
		err = l.API.Get(ctx, key, p)
	}
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// AgentIDs are the names of the namespace's Agents, from the cache.
func (l Lookup) AgentIDs(ctx context.Context, namespace string) ([]string, error) {
	var list sessionsv1alpha1.AgentList
	if err := l.Cache.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list.Items))
	for _, a := range list.Items {
		ids = append(ids, a.Name)
	}
	return ids, nil
}

// DefaultAgentID is the agent a person's spawn that names none runs under
// (policy.DefaultAgentID), and the namespace's Agents for a refusal that names them.
func (l Lookup) DefaultAgentID(ctx context.Context, namespace string) (string, []string, error) {
	pol, err := l.SessionPolicy(ctx, namespace)
	if err != nil {
		return "", nil, err
	}
	ids, err := l.AgentIDs(ctx, namespace)
	if err != nil {
		return "", nil, err
	}
	var spec *sessionsv1alpha1.SessionPolicySpec
	if pol != nil {
		spec = &pol.Spec
	}
	return policy.DefaultAgentID(spec, ids), ids, nil
}

// ParentOf returns the spawnedBy of a session key, from the cache.
func (l Lookup) ParentOf(ctx context.Context, namespace string) func(string) (string, bool) {
	return ParentOf(ctx, l.Cache, namespace)
}

// SessionByKey returns the session with key in namespace, or nil: the session named
// sessionkey.ObjectName(key) when it has the key, else the one the index holds (the index
// keeps only sessions named otherwise, see cacheindex.SessionKey).
func SessionByKey(ctx context.Context, r client.Reader, namespace, key string) (*sessionsv1alpha1.AgentSession, error) {
	if s, err := namedByKey(ctx, r, namespace, key); s != nil || err != nil {
		return s, err
	}
	return oneSession(ctx, r, namespace, cacheindex.SessionKey, key)
}

// namedByKey is the session named sessionkey.ObjectName(key) if it has key, or nil.
func namedByKey(ctx context.Context, r client.Reader, namespace, key string) (*sessionsv1alpha1.AgentSession, error) {
	s := &sessionsv1alpha1.AgentSession{}
	err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: sessionkey.ObjectName(key)}, s)
	switch {
	case notFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case s.Spec.Key != key:
		return nil, nil
	}
	return s, nil
}

// SessionByID returns the session whose transcript has sessionId id, or nil; r is the API
// server (or a reader with the status.sessionId index, in unit tables).
func SessionByID(ctx context.Context, r client.Reader, namespace, id string) (*sessionsv1alpha1.AgentSession, error) {
	return oneSession(ctx, r, namespace, cacheindex.SessionID, id)
}

func oneSession(ctx context.Context, r client.Reader, namespace, field, value string) (*sessionsv1alpha1.AgentSession, error) {
	var list sessionsv1alpha1.AgentSessionList
	if err := r.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{field: value}); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &list.Items[0], nil
}

// ParentOf returns a policy.ParentOf-shaped lookup over the cache: the spawnedBy of the
// session with a key. Lookup errors end the walk (a missing parent is no parent).
func ParentOf(ctx context.Context, r client.Reader, namespace string) func(string) (string, bool) {
	return func(key string) (string, bool) {
		s, err := SessionByKey(ctx, r, namespace, key)
		if err != nil || s == nil {
			return "", false
		}
		return s.Spec.SpawnedBy, true
	}
}

// Agent reads the Agent name (an agent id) from the cache and, on a miss, from the API
// server: an Agent applied together with the send or run that names it may not have reached
// the cache yet, and a miss must not fail them for good. Nil when neither has it.
func Agent(ctx context.Context, cached, live client.Reader, namespace, name string) (*sessionsv1alpha1.Agent, error) {
	a := &sessionsv1alpha1.Agent{}
	if found, err := get(ctx, cached, live, types.NamespacedName{Namespace: namespace, Name: name}, a); !found || err != nil {
		return nil, err
	}
	return a, nil
}

// Get reads namespace/name into obj from the cache and, on a miss, from the API server, as
// Agent does; false when neither has it.
func (l Lookup) Get(ctx context.Context, namespace, name string, obj client.Object) (bool, error) {
	return get(ctx, l.Cache, l.live(), types.NamespacedName{Namespace: namespace, Name: name}, obj)
}

func get(ctx context.Context, cached, live client.Reader, key types.NamespacedName, obj client.Object) (bool, error) {
	err := cached.Get(ctx, key, obj)
	if notFound(err) {
		err = live.Get(ctx, key, obj)
	}
	if notFound(err) {
		return false, nil
	}
	return err == nil, err
}

// notFound is apierrors.IsNotFound without its cost for a nil error (it allocates whatever
// the error): every admission reads three or four objects that are found.
func notFound(err error) bool { return err != nil && apierrors.IsNotFound(err) }
