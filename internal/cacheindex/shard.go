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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
)

// ShardedKinds are the kinds whose number grows with use; a shard caches only its own
// namespaces' (shard.Label). Agents and SessionPolicies stay cached whole: they are few,
// and the webhook, which answers for every namespace, reads them.
func ShardedKinds() []client.Object {
	return []client.Object{&sessionsv1alpha1.AgentSession{}, &sessionsv1alpha1.SessionSend{}, &sessionsv1alpha1.SubagentRun{}}
}

// ShardCacheOptions are CacheOptions whose informers of ShardedKinds select s's label, so
// that memory per Pod divides with the number of shards.
func ShardCacheOptions(s shard.Shard) cache.Options {
	o := CacheOptions()
	if sel := s.Selector(); sel != nil {
		for obj, by := range o.ByObject {
			if isSharded(obj) {
				by.Label = sel
				o.ByObject[obj] = by
			}
		}
	}
	return o
}

func isSharded(obj any) bool {
	switch obj.(type) {
	case *sessionsv1alpha1.AgentSession, *sessionsv1alpha1.AgentSessionList, *sessionsv1alpha1.SessionSend, *sessionsv1alpha1.SessionSendList, *sessionsv1alpha1.SubagentRun, *sessionsv1alpha1.SubagentRunList:
		return true
	}
	return false
}

// ShardClient reads ShardedKinds of namespaces other than s's from api (the API server)
// and everything else from c: the webhook answers for every namespace, its cache holds
// only s's.
func ShardClient(c client.Client, api client.Reader, s shard.Shard) client.Client {
	if !s.Sharded() {
		return c
	}
	return shardClient{Client: c, api: api, shard: s}
}

type shardClient struct {
	client.Client
	api   client.Reader
	shard shard.Shard
}

func (c shardClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if isSharded(obj) && !c.shard.Owns(key.Namespace) {
		return c.api.Get(ctx, key, obj, opts...)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c shardClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	ns := (&client.ListOptions{}).ApplyOptions(opts).Namespace
	if isSharded(list) && (ns == "" || !c.shard.Owns(ns)) {
		return c.api.List(ctx, list, opts...)
	}
	return c.Client.List(ctx, list, opts...)
}

// relabelPage bounds one read of Relabel's sweep.
const relabelPage = 500

// Relabel stamps s's label on the ShardedKinds objects of s's namespaces that lack it: those
// made before the install was sharded, or under another count of shards (resharding), or
// whose label a user changed. It reads object metadata only, a page at a time, and only
// what is not labelled for s already, from api (a cache would start a metadata informer of
// every namespace); c patches. The webhook labels everything new.
func Relabel(ctx context.Context, c client.Client, api client.Reader, s shard.Shard) (int, error) {
	if !s.Sharded() {
		return 0, nil
	}
	req, err := labels.NewRequirement(shard.Label, selection.NotEquals, []string{s.Own()})
	if err != nil {
		return 0, err
	}
	sel := labels.NewSelector().Add(*req)
	n := 0
	for _, obj := range ShardedKinds() {
		gvk, err := c.GroupVersionKindFor(obj)
		if err != nil {
			return n, err
		}
		for cont := ""; ; {
			page := &metav1.PartialObjectMetadataList{}
			page.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := api.List(ctx, page, client.MatchingLabelsSelector{Selector: sel}, client.Limit(relabelPage), client.Continue(cont)); err != nil {
				return n, fmt.Errorf("relabel %s: %w", gvk.Kind, err)
			}
			for i := range page.Items {
				m := &page.Items[i]
				if !s.Owns(m.Namespace) {
					continue
				}
				patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, shard.Label, s.LabelOf(m.Namespace))
				m.SetGroupVersionKind(gvk)
				if err := c.Patch(ctx, m, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
					return n, fmt.Errorf("relabel %s %s/%s: %w", gvk.Kind, m.Namespace, m.Name, err)
				}
				n++
			}
			if cont = page.Continue; cont == "" {
				break
			}
		}
	}
	return n, nil
}
