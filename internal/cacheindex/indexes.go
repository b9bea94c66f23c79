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

// Package cacheindex says what the manager's informer cache holds: the field indexes it
// keeps (registered once by Setup, for the manager and the suites), and the cache options,
// whose transforms trim finished SessionSends and SubagentRuns to their identity and outcome
// (see CacheOptions). Lookups over the cache are in internal/lookup.
package cacheindex

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// Index names.
const (
	// SessionKey holds only the sessions not named sessionkey.ObjectName(spec.key): the
	// others (every session the operator, the plugin or the tools make) are read by name, and
	// a one-element set per session is about 300 bytes of memory.
	SessionKey = "spec.key"
	// SessionID is the AgentSession CRD's selectable field status.sessionId: sessionId
	// lookups (a ref that is not a key) go to the API server, not to a cache index.
	SessionID        = "status.sessionId"
	SessionSpawnedBy = "spec.spawnedBy"
	RunRequester     = "spec.requesterSessionKey"
	SendFrom         = "spec.fromSessionKey"
	// SendTarget holds a send's target as resolved (status) and as written (spec).
	SendTarget = "status.targetSessionKey"
)

// Setup registers every index with the manager's field indexer. On an informer cache the
// indexes are namespaced only (see namespaced): every lookup names its namespace.
func Setup(ctx context.Context, fi client.FieldIndexer) error {
	indexes := []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&v1.AgentSession{}, SessionKey, func(o client.Object) []string { return unconventionalKey(o.(*v1.AgentSession)) }},
		{&v1.AgentSession{}, SessionSpawnedBy, func(o client.Object) []string { return nonEmpty(o.(*v1.AgentSession).Spec.SpawnedBy) }},
		{&v1.SubagentRun{}, RunRequester, func(o client.Object) []string { return nonEmpty(o.(*v1.SubagentRun).Spec.RequesterSessionKey) }},
		{&v1.SessionSend{}, SendFrom, func(o client.Object) []string { return nonEmpty(o.(*v1.SessionSend).Spec.FromSessionKey) }},
	}
	for _, ix := range indexes {
		if err := indexField(ctx, fi, ix.obj, ix.field, ix.fn); err != nil {
			return err
		}
	}
	return nil
}

// SetupReaders registers Setup's indexes and those only the transcript-store's readers use
// (the console's work list): the manager does not pay for them on every cached send.
func SetupReaders(ctx context.Context, fi client.FieldIndexer) error {
	if err := Setup(ctx, fi); err != nil {
		return err
	}
	return indexField(ctx, fi, &v1.SessionSend{}, SendTarget, func(o client.Object) []string { return sendTargets(o.(*v1.SessionSend)) })
}

func sendTargets(s *v1.SessionSend) []string {
	keys := nonEmpty(s.Status.TargetSessionKey)
	if s.Spec.SessionKey != s.Status.TargetSessionKey {
		keys = append(keys, nonEmpty(s.Spec.SessionKey)...)
	}
	return keys
}

// unconventionalKey is the key of a session not named by it, which only the index finds.
func unconventionalKey(s *v1.AgentSession) []string {
	if s.Spec.Key == "" || s.Name == sessionkey.ObjectName(s.Spec.Key) {
		return nil
	}
	return []string{s.Spec.Key}
}

// SessionIDValues is what the API server selects on for status.sessionId: the fake client
// of unit tables needs it as an index to answer the same List.
func SessionIDValues(o client.Object) []string {
	return nonEmpty(o.(*v1.AgentSession).Status.SessionID)
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
