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
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// indexedReader answers the lookups the tools, the console and the plugin make by the
// manager's field indexes (spec.key, status.sessionId, spec.requesterSessionKey, ...) over a
// client without a cache: where the API server cannot select custom resources on those
// fields, the list is read whole, as the caller, and filtered here with the indexes' own
// functions; fields the CRDs declare selectable (Selectable) go to the API server.
type indexedReader struct {
	client.WithWatch
	fns fieldIndexes
}

// fieldIndexes collects cacheindex's index functions by object kind and field.
type fieldIndexes map[indexKey]client.IndexerFunc

type indexKey struct {
	kind  reflect.Type
	field string
}

func (s fieldIndexes) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	s[indexKey{reflect.TypeOf(obj).Elem(), field}] = fn
	return nil
}

// WithIndexes is c answering lists by SetupReaders' field indexes itself, for a client
// without a cache (a caller's own, through impersonation or a kubeconfig).
func WithIndexes(c client.WithWatch) client.WithWatch {
	fns := fieldIndexes{}
	_ = SetupReaders(context.Background(), fns) // collecting never fails
	return indexedReader{WithWatch: c, fns: fns}
}

func (r indexedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	if o.FieldSelector == nil || o.FieldSelector.Empty() {
		return r.WithWatch.List(ctx, list, opts...)
	}
	kind, ok := itemType(list)
	reqs := o.FieldSelector.Requirements()
	for _, req := range reqs {
		if !ok || r.fns[indexKey{kind, req.Field}] == nil || Selectable(reflect.New(kind).Interface().(client.Object), req.Field) {
			return r.WithWatch.List(ctx, list, opts...)
		}
	}
	o.FieldSelector = nil
	if err := r.WithWatch.List(ctx, list, o); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	items = slices.DeleteFunc(items, func(obj runtime.Object) bool {
		for _, req := range reqs {
			if !slices.Contains(r.fns[indexKey{kind, req.Field}](obj.(client.Object)), req.Value) {
				return true
			}
		}
		return false
	})
	return meta.SetList(list, items)
}

// itemType is the struct type of a typed list's items.
func itemType(list client.ObjectList) (reflect.Type, bool) {
	f := reflect.ValueOf(list).Elem().FieldByName("Items")
	if !f.IsValid() || f.Kind() != reflect.Slice {
		return nil, false
	}
	return f.Type().Elem(), true
}
