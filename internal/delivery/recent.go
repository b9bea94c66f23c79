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

package delivery

import (
	"sync"

	"k8s.io/utils/lru"
)

// recentCapacity bounds the remembered keys; an announce is repeated within seconds of its
// delivery, so the newest few thousand are enough.
const recentCapacity = 4096

// recentKeys is a bounded set of keys (least recently used forgotten first). The zero
// value is empty, so a Deliverer literal needs no constructor.
type recentKeys struct {
	once  sync.Once
	cache *lru.Cache
}

func (r *recentKeys) lru() *lru.Cache {
	r.once.Do(func() { r.cache = lru.New(recentCapacity) })
	return r.cache
}

func (r *recentKeys) has(key string) bool {
	if key == "" {
		return false
	}
	_, ok := r.lru().Get(key)
	return ok
}

func (r *recentKeys) add(key string) {
	if key != "" {
		r.lru().Add(key, struct{}{})
	}
}
