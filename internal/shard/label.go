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

package shard

import (
	"strconv"

	"k8s.io/apimachinery/pkg/labels"
)

// Label says which shard, of how many, owns an object's namespace ("1-of-2"): the webhook
// stamps it on sessions, sends and runs, and each shard's informers select their own value,
// so a shard caches only its namespaces. The count is in the value, so after n changes no
// shard reads another's objects until they are relabelled (Relabel, at each shard's start).
const Label = "sessions.agents.dev/shard"

// LabelWebhooks are the mutating webhooks that do nothing but stamp Label, on sessions and
// sends (webhook/shardlabel.go's markers; a run's defaulter stamps it among other things).
// An install of one shard leaves them out, as one shard labels nothing: config/webhook's
// kustomization, the chart with shards: 1, devcluster without --shard=i/n.
var LabelWebhooks = []string{"magentsession.sessions.agents.dev", "msessionsend.sessions.agents.dev"}

// Sharded reports whether there is more than one shard: one shard labels and selects nothing.
func (s Shard) Sharded() bool { return s.Count > 1 }

// LabelOf is the Label value of namespace's objects under s's count.
func (s Shard) LabelOf(namespace string) string { return value(Of(namespace, s.Count), s.Count) }

// Own is the Label value of s's own namespaces' objects.
func (s Shard) Own() string { return value(s.Index, s.Count) }

// Selector selects the objects of s's namespaces; nil for an unsharded install.
func (s Shard) Selector() labels.Selector {
	if !s.Sharded() {
		return nil
	}
	return labels.SelectorFromSet(labels.Set{Label: s.Own()})
}

// Stamp sets obj's Label for its namespace; false when it already had it (or s is unsharded).
func (s Shard) Stamp(obj interface {
	GetNamespace() string
	GetLabels() map[string]string
	SetLabels(map[string]string)
}) bool {
	if !s.Sharded() {
		return false
	}
	want := s.LabelOf(obj.GetNamespace())
	l := obj.GetLabels()
	if l[Label] == want {
		return false
	}
	if l == nil {
		l = map[string]string{}
	}
	l[Label] = want
	obj.SetLabels(l)
	return true
}

func value(i, n int) string { return strconv.Itoa(i) + "-of-" + strconv.Itoa(n) }
