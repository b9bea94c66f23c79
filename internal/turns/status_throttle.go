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

package turns

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// throttle coalesces the status writes of a busy session: the first update is written at
// once, later ones at most once per interval, and the last one always. A send runs two or
// more turns in its target; without this each would cost the API server a write and every
// watcher of AgentSessions an event.
type throttle[T any] struct {
	clock    clock.WithDelayedExecution
	interval time.Duration
	write    func(T)

	mu      sync.Mutex
	entries map[types.NamespacedName]*throttleEntry[T]
	swept   time.Time // when the map was last swept
}

type throttleEntry[T any] struct {
	until   time.Time // the end of the key's current interval
	pending *T        // the newest update not yet written
	armed   bool      // a tick is due at until
}

// newThrottle returns a throttle; an interval <= 0 writes every update at once.
func newThrottle[T any](c clock.WithDelayedExecution, interval time.Duration, write func(T)) *throttle[T] {
	return &throttle[T]{clock: c, interval: interval, write: write, entries: map[types.NamespacedName]*throttleEntry[T]{}}
}

// offer writes u now when key's interval is over, or keeps it as key's pending update
// (replacing an older one) for the interval's end.
func (t *throttle[T]) offer(key types.NamespacedName, u T) {
	if t.interval <= 0 {
		t.write(u)
		return
	}
	now := t.clock.Now()
	t.mu.Lock()
	if en, ok := t.entries[key]; ok && now.Before(en.until) {
		en.pending = &u
		arm := !en.armed
		en.armed = true
		t.mu.Unlock()
		// Timers are armed here, never in tick: a fake clock runs callbacks under its lock.
		if arm {
			t.clock.AfterFunc(en.until.Sub(now), func() { t.tick(key, en) })
		}
		return
	}
	// A new entry: a tick of the one it replaces (late on a busy machine) finds it gone.
	en := &throttleEntry[T]{until: now.Add(t.interval), armed: true}
	t.entries[key] = en
	t.sweepLocked(now)
	t.mu.Unlock()
	t.write(u)
	t.clock.AfterFunc(t.interval, func() { t.tick(key, en) })
}

// tick ends key's interval: the pending update is written and a new interval starts, or,
// when nothing is pending, key is forgotten so the map holds only busy sessions. It must
// not call the clock: a fake clock runs callbacks under its lock.
func (t *throttle[T]) tick(key types.NamespacedName, en *throttleEntry[T]) {
	t.mu.Lock()
	if t.entries[key] != en || !en.armed {
		t.mu.Unlock()
		return
	}
	en.armed = false
	if en.pending == nil {
		delete(t.entries, key)
		t.mu.Unlock()
		return
	}
	u := *en.pending
	en.pending, en.until = nil, en.until.Add(t.interval)
	t.mu.Unlock()
	t.write(u)
}

// sweepLocked forgets keys whose interval ended with nothing pending (a tick that wrote
// arms no next one), at most once per interval so a busy map costs O(1) per offer.
func (t *throttle[T]) sweepLocked(now time.Time) {
	if now.Sub(t.swept) < t.interval {
		return
	}
	for key, en := range t.entries {
		if !en.armed && !now.Before(en.until) {
			delete(t.entries, key)
		}
	}
	t.swept = now
}

// flush writes every pending update now (on shutdown, so no counter is left behind).
func (t *throttle[T]) flush() {
	t.mu.Lock()
	var out []T
	for key, en := range t.entries {
		if en.pending != nil {
			out = append(out, *en.pending)
		}
		delete(t.entries, key)
	}
	t.mu.Unlock()
	for _, u := range out {
		t.write(u)
	}
}
