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

package main

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
)

// cacheReader stands in for the manager's informer cache in benchmarks: objects held in
// memory, Get and List return deep copies, and the session indexes are map lookups — what
// the real cache does, without an API server behind it.
type cacheReader struct {
	objs     map[client.ObjectKey]client.Object
	sessions map[string][]*sessionsv1alpha1.AgentSession // index value -> sessions
}

func newCacheReader(objs ...client.Object) *cacheReader {
	r := &cacheReader{objs: map[client.ObjectKey]client.Object{}, sessions: map[string][]*sessionsv1alpha1.AgentSession{}}
	for _, o := range objs {
		r.objs[client.ObjectKeyFromObject(o)] = o
		if s, ok := o.(*sessionsv1alpha1.AgentSession); ok {
			r.sessions[cacheindex.SessionKey+"="+s.Spec.Key] = append(r.sessions[cacheindex.SessionKey+"="+s.Spec.Key], s)
			if s.Status.SessionID != "" {
				r.sessions[cacheindex.SessionID+"="+s.Status.SessionID] = append(r.sessions[cacheindex.SessionID+"="+s.Status.SessionID], s)
			}
		}
	}
	return r
}

func (r *cacheReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	o, ok := r.objs[key]
	if !ok || reflect.TypeOf(o) != reflect.TypeOf(obj) {
		return notFound(key.Name)
	}
	switch src := o.(type) {
	case *sessionsv1alpha1.Agent:
		src.DeepCopyInto(obj.(*sessionsv1alpha1.Agent))
	case *sessionsv1alpha1.AgentSession:
		src.DeepCopyInto(obj.(*sessionsv1alpha1.AgentSession))
	case *sessionsv1alpha1.SessionPolicy:
		src.DeepCopyInto(obj.(*sessionsv1alpha1.SessionPolicy))
	default:
		return fmt.Errorf("cacheReader holds no %T", o)
	}
	return nil
}

func notFound(name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Group: sessionsv1alpha1.GroupVersion.Group}, name)
}

func (r *cacheReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	sl, ok := list.(*sessionsv1alpha1.AgentSessionList)
	if !ok || lo.FieldSelector == nil {
		return fmt.Errorf("cacheReader lists AgentSessions by an index only")
	}
	reqs := lo.FieldSelector.Requirements()
	if len(reqs) != 1 {
		return fmt.Errorf("one field requirement, got %v", lo.FieldSelector)
	}
	for _, s := range r.sessions[reqs[0].Field+"="+reqs[0].Value] {
		sl.Items = append(sl.Items, *s.DeepCopy())
	}
	return nil
}
