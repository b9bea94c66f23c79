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

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
)

// IndexFake registers the manager's field indexes with a fake client builder, so code that
// reads by index (the lookup layer) reads the fake client as it reads the manager's cache.
func IndexFake(b *fake.ClientBuilder) *fake.ClientBuilder {
	// Setup only fails when its indexer does, and this one never does.
	_ = cacheindex.SetupReaders(context.Background(), builderIndexes{b})
	return b
}

type builderIndexes struct{ b *fake.ClientBuilder }

func (i builderIndexes) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	i.b.WithIndex(obj, field, fn)
	return nil
}
