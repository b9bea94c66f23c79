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

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
)

// indexedReader answers the session lookups the tools make by the manager's field indexes
// (spec.key, status.sessionId, ...) over a client without a cache: the API server cannot
// select AgentSessions on those fields, so the list is read whole, as the caller, and
// filtered here with the indexes' own functions.
type indexedReader struct {
	client.WithWatch
	fns map[string]client.IndexerFunc
}

// sessionIndexes collects cacheindex's AgentSession index functions.
type sessionIndexes map[string]client.IndexerFunc

func (s sessionIndexes) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	if _, ok := obj.(*v1.AgentSession); ok {
		s[field] = fn
	}
	return nil
}

func withIndexes(c client.WithWatch) client.WithWatch {
	fns := sessionIndexes{}
	_ = cacheindex.Setup(context.Background(), fns) // collecting never fails
	return indexedReader{WithWatch: c, fns: fns}
}

func (r indexedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	sessions, ok := list.(*v1.AgentSessionList)
	if !ok || o.FieldSelector == nil || o.FieldSelector.Empty() {
		return r.WithWatch.List(ctx, list, opts...)
	}
	reqs := o.FieldSelector.Requirements()
	for _, req := range reqs {
		if r.fns[req.Field] == nil {
			return r.WithWatch.List(ctx, list, opts...)
		}
	}
	o.FieldSelector = nil
	if err := r.WithWatch.List(ctx, sessions, o); err != nil {
		return err
	}
	sessions.Items = slices.DeleteFunc(sessions.Items, func(s v1.AgentSession) bool {
		for _, req := range reqs {
			if !slices.Contains(r.fns[req.Field](&s), req.Value) {
				return true
			}
		}
		return false
	})
	return nil
}
