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

package testenv

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
)

// IndexFake registers the manager's field indexes with a fake client builder, so code that
// reads by index (the lookup layer) reads the fake client as it reads the manager's cache.
func IndexFake(b *fake.ClientBuilder) *fake.ClientBuilder {
	// Setup only fails when its indexer does, and this one never does.
	_ = cacheindex.SetupReaders(context.Background(), builderIndexes{b})
	// The API server answers status.sessionId (a selectable field); a fake client needs an index.
	return b.WithIndex(&sessionsv1alpha1.AgentSession{}, cacheindex.SessionID, cacheindex.SessionIDValues)
}

type builderIndexes struct{ b *fake.ClientBuilder }

func (i builderIndexes) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	i.b.WithIndex(obj, field, fn)
	return nil
}

// ManagerCacheT starts an informer cache as the manager's (cacheindex.CacheOptions) with the
// indexes setup registers (nil: none), and waits until it has synced; it stops with the test.
func ManagerCacheT(t *testing.T, cfg *rest.Config, setup func(context.Context, client.FieldIndexer) error) cache.Cache {
	t.Helper()
	opts := cacheindex.CacheOptions()
	opts.Scheme = scheme.New()
	c, err := cache.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		if err := setup(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = c.Start(t.Context()) }()
	if !c.WaitForCacheSync(t.Context()) {
		t.Fatal("cache did not sync")
	}
	return c
}
