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

// Package indexer registers the cache's field indexes once, for the manager and the suites:
// the lookups every controller, webhook and tool makes (a session by key or by sessionId, the
// children of a session, the runs of a requester) are then index reads, not scans.
package indexer

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Index names.
const (
	SessionKey       = "spec.key"
	SessionID        = "status.sessionId"
	SessionSpawnedBy = "spec.spawnedBy"
	RunRequester     = "spec.requesterSessionKey"
)

// Setup registers every index with the manager's field indexer.
func Setup(ctx context.Context, fi client.FieldIndexer) error {
	indexes := []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&v1.AgentSession{}, SessionKey, func(o client.Object) []string { return nonEmpty(o.(*v1.AgentSession).Spec.Key) }},
		{&v1.AgentSession{}, SessionID, func(o client.Object) []string { return nonEmpty(o.(*v1.AgentSession).Status.SessionID) }},
		{&v1.AgentSession{}, SessionSpawnedBy, func(o client.Object) []string { return nonEmpty(o.(*v1.AgentSession).Spec.SpawnedBy) }},
		{&v1.SubagentRun{}, RunRequester, func(o client.Object) []string { return nonEmpty(o.(*v1.SubagentRun).Spec.RequesterSessionKey) }},
	}
	for _, ix := range indexes {
		if err := fi.IndexField(ctx, ix.obj, ix.field, ix.fn); err != nil {
			return err
		}
	}
	return nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// SessionByKey returns the session with key in namespace, or nil.
func SessionByKey(ctx context.Context, r client.Reader, namespace, key string) (*v1.AgentSession, error) {
	return oneSession(ctx, r, namespace, SessionKey, key)
}

// SessionByID returns the session whose transcript has sessionId id, or nil.
func SessionByID(ctx context.Context, r client.Reader, namespace, id string) (*v1.AgentSession, error) {
	return oneSession(ctx, r, namespace, SessionID, id)
}

func oneSession(ctx context.Context, r client.Reader, namespace, field, value string) (*v1.AgentSession, error) {
	var list v1.AgentSessionList
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
func Agent(ctx context.Context, cached, live client.Reader, namespace, name string) (*v1.Agent, error) {
	a := &v1.Agent{}
	key := types.NamespacedName{Namespace: namespace, Name: name}
	err := cached.Get(ctx, key, a)
	if apierrors.IsNotFound(err) {
		err = live.Get(ctx, key, a)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}
