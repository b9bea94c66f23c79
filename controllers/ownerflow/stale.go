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

package ownerflow

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// staleReads remembers, per object, the resourceVersion its last status write replaced. A
// turn's wake-up often arrives before the informer has the write: while the cache still
// returns the replaced version, a reconcile would redo work from old status and its write
// would be refused (409). It waits instead; the write's own watch event brings it back.
type staleReads struct {
	m sync.Map // types.NamespacedName -> string
}

// wrote records that obj was written over resourceVersion from.
func (s *staleReads) wrote(obj client.Object, from string) {
	s.m.Store(client.ObjectKeyFromObject(obj), from)
}

// stale reports whether obj, as read from the cache, is the version a write replaced.
func (s *staleReads) stale(obj client.Object) bool {
	key := client.ObjectKeyFromObject(obj)
	from, ok := s.m.Load(key)
	if !ok {
		return false
	}
	if from.(string) == obj.GetResourceVersion() {
		return true
	}
	s.m.Delete(key) // the cache has caught up
	return false
}

// forget drops what is remembered about the object named key.
func (s *staleReads) forget(key types.NamespacedName) { s.m.Delete(key) }
