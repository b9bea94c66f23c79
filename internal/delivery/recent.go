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

import "sync"

// recentCapacity bounds the remembered keys; an announce is repeated within seconds of its
// delivery, so the newest few thousand are enough.
const recentCapacity = 4096

// recentKeys is a bounded set that forgets its oldest key first. The zero value is empty.
type recentKeys struct {
	mu   sync.Mutex
	set  map[string]struct{}
	ring []string
	next int
}

func (r *recentKeys) has(key string) bool {
	if key == "" {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.set[key]
	return ok
}

func (r *recentKeys) add(key string) {
	if key == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set == nil {
		r.set = make(map[string]struct{}, recentCapacity)
		r.ring = make([]string, recentCapacity)
	}
	if _, ok := r.set[key]; ok {
		return
	}
	delete(r.set, r.ring[r.next])
	r.ring[r.next] = key
	r.set[key] = struct{}{}
	r.next = (r.next + 1) % recentCapacity
}
