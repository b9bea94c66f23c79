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

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
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
	// SendTarget is a send's target as resolved and SendKey as written: both, and
	// RunRequester, are selectable fields of their CRDs, so a reader without a cache (the
	// transcript-store's) asks the API server for them (Selectable). The status holds the
	// resolved key only where it differs from spec.sessionKey (SessionSend.SetTargetKey), so
	// the sends into a key are those of either field (the console's work list reads both).
	SendTarget = "status.targetSessionKey"
	SendKey    = "spec.sessionKey"
	// ApprovalOwner is a ToolApproval's spec.owner as <Kind>/<name> (ApprovalOwnerKey):
	// an owner that ends expires its pending approvals.
	ApprovalOwner = "spec.owner"
)

// ApprovalOwnerKey is the ApprovalOwner index value of an owner.
func ApprovalOwnerKey(kind, name string) string { return kind + "/" + name }

// Setup registers every index with the manager's field indexer. On an informer cache the
// indexes are namespaced only (see namespaced): every lookup names its namespace.
func Setup(ctx context.Context, fi client.FieldIndexer) error {
	if err := SessionIndexes(ctx, fi); err != nil {
		return err
	}
	indexes := []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&sessionsv1alpha1.SubagentRun{}, RunRequester, func(o client.Object) []string {
			return nonEmpty(o.(*sessionsv1alpha1.SubagentRun).Spec.RequesterSessionKey)
		}},
		{&sessionsv1alpha1.SessionSend{}, SendFrom, func(o client.Object) []string { return nonEmpty(o.(*sessionsv1alpha1.SessionSend).Spec.FromSessionKey) }},
		{&sessionsv1alpha1.ToolApproval{}, ApprovalOwner, func(o client.Object) []string {
			ow := o.(*sessionsv1alpha1.ToolApproval).Spec.Owner
			return []string{ApprovalOwnerKey(ow.Kind, ow.Name)}
		}},
	}
	for _, ix := range indexes {
		if err := indexField(ctx, fi, ix.obj, ix.field, ix.fn); err != nil {
			return err
		}
	}
	return nil
}

// SetupReaders registers Setup's indexes and the send fields the console's work list
// selects by, for readers that filter themselves (fake clients in tests): the manager does
// not pay for them on every cached send, and the transcript-store asks the API server.
func SetupReaders(ctx context.Context, fi client.FieldIndexer) error {
	if err := Setup(ctx, fi); err != nil {
		return err
	}
	// As the API server selects it: the field as stored, not SessionSend.TargetKey.
	if err := indexField(ctx, fi, &sessionsv1alpha1.SessionSend{}, SendTarget, func(o client.Object) []string {
		return nonEmpty(o.(*sessionsv1alpha1.SessionSend).Status.TargetSessionKey)
	}); err != nil {
		return err
	}
	return indexField(ctx, fi, &sessionsv1alpha1.SessionSend{}, SendKey, func(o client.Object) []string { return nonEmpty(o.(*sessionsv1alpha1.SessionSend).Spec.SessionKey) })
}

// SessionIndexes registers the AgentSession indexes of Setup alone: the transcript-store
// caches no sends or runs.
func SessionIndexes(ctx context.Context, fi client.FieldIndexer) error {
	if err := indexField(ctx, fi, &sessionsv1alpha1.AgentSession{}, SessionKey, func(o client.Object) []string { return unconventionalKey(o.(*sessionsv1alpha1.AgentSession)) }); err != nil {
		return err
	}
	return indexField(ctx, fi, &sessionsv1alpha1.AgentSession{}, SessionSpawnedBy, func(o client.Object) []string { return nonEmpty(o.(*sessionsv1alpha1.AgentSession).Spec.SpawnedBy) })
}

// Selectable reports whether the API server selects obj's kind by field (the CRDs'
// selectableFields): a reader without a cache passes such a selector on rather than
// reading the namespace whole.
func Selectable(obj client.Object, field string) bool {
	switch obj.(type) {
	case *sessionsv1alpha1.SessionSend:
		return field == SendPhaseField || field == SendTarget || field == SendKey
	case *sessionsv1alpha1.SubagentRun:
		return field == RunRequester
	}
	return false
}

// unconventionalKey is the key of a session not named by it, which only the index finds.
func unconventionalKey(s *sessionsv1alpha1.AgentSession) []string {
	if s.Spec.Key == "" || s.Name == sessionkey.ObjectName(s.Spec.Key) {
		return nil
	}
	return []string{s.Spec.Key}
}

// SessionIDValues is what the API server selects on for status.sessionId: the fake client
// of unit tables needs it as an index to answer the same List.
func SessionIDValues(o client.Object) []string {
	return nonEmpty(o.(*sessionsv1alpha1.AgentSession).Status.SessionID)
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
