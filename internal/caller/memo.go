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

package caller

import (
	"crypto/sha256"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// maxMemoEntries bounds a Memo: a flood of distinct tokens empties it rather than growing it.
const maxMemoEntries = 10000

// Memo remembers answers of the API server (who a token is, what a user may do) for a short
// time, keyed by a digest of the question, so that a client's burst of requests costs one
// review. Only definitive answers are kept: an error of the API server itself is asked again.
type Memo[V any] struct {
	ttl   time.Duration
	clock clock.PassiveClock

	mu sync.Mutex
	m  map[[32]byte]memoEntry[V]
}

type memoEntry[V any] struct {
	v       V
	expires time.Time
}

// NewMemo is a Memo whose answers last ttl on clk; ttl <= 0 remembers nothing.
func NewMemo[V any](ttl time.Duration, clk clock.PassiveClock) *Memo[V] {
	return &Memo[V]{ttl: ttl, clock: clk, m: map[[32]byte]memoEntry[V]{}}
}

// Key digests the parts of a question; parts are separated so that ("ab","c") != ("a","bc").
func Key(parts ...string) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

// Get returns the answer remembered for key, if it has not expired.
func (m *Memo[V]) Get(key [32]byte) (V, bool) {
	var zero V
	if m == nil || m.ttl <= 0 {
		return zero, false
	}
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok || !now.Before(e.expires) {
		return zero, false
	}
	return e.v, true
}

// Put remembers v for key.
func (m *Memo[V]) Put(key [32]byte, v V) {
	if m == nil || m.ttl <= 0 {
		return
	}
	expires := m.clock.Now().Add(m.ttl)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.m) >= maxMemoEntries {
		clear(m.m)
	}
	m.m[key] = memoEntry[V]{v: v, expires: expires}
}
