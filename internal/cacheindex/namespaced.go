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

package cacheindex

import (
	"context"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// informers is the part of an informer cache indexField needs.
type informers interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// indexField registers fn under field. On an informer cache it adds the index to the
// informer itself with namespaced keys only: controller-runtime's IndexField also keeps an
// all-namespaces copy of every value, and since nearly every value here is unique (a session
// key, a sessionId), that copy is a one-element set per object, about half of the indexes'
// memory at 100,000 sessions. The cache's reader looks namespaced lists up under the same
// index name and key ("field:<field>", "<namespace>/<value>"), so client.MatchingFields with
// client.InNamespace reads these indexes; a lookup without a namespace finds nothing, and none
// is made. Other indexers (the fake client's builder, collectors) get IndexField.
func indexField(ctx context.Context, fi client.FieldIndexer, obj client.Object, field string, fn client.IndexerFunc) error {
	c, ok := fi.(informers)
	if !ok {
		return fi.IndexField(ctx, obj, field, fn)
	}
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	return inf.AddIndexers(toolscache.Indexers{"field:" + field: func(o any) ([]string, error) {
		obj, ok := o.(client.Object)
		if !ok {
			return nil, nil
		}
		vals := fn(obj)
		for i, v := range vals {
			vals[i] = obj.GetNamespace() + "/" + v
		}
		return vals, nil
	}})
}
