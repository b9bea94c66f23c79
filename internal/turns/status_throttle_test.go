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
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestThrottle(t *testing.T) {
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	type step struct {
		advance time.Duration // stepped before the offer
		key     types.NamespacedName
		value   string // "" offers nothing
	}
	cases := map[string]struct {
		interval time.Duration
		steps    []step
		final    time.Duration // stepped after the last offer
		flush    bool
		want     []string
		left     int // keys still tracked at the end
	}{
		"a single update is written at once": {
			interval: time.Second,
			steps:    []step{{key: a, value: "a1"}},
			want:     []string{"a1"},
			left:     1,
		},
		"updates within an interval collapse into the newest, written at its end": {
			interval: time.Second,
			steps:    []step{{key: a, value: "a1"}, {key: a, value: "a2"}, {advance: 100 * time.Millisecond, key: a, value: "a3"}},
			final:    time.Second,
			want:     []string{"a1", "a3"},
			left:     1,
		},
		"nothing pending is written twice": {
			interval: time.Second,
			steps:    []step{{key: a, value: "a1"}, {key: a, value: "a2"}},
			final:    3 * time.Second,
			want:     []string{"a1", "a2"},
			left:     1,
		},
		"a key that was quiet for an interval writes at once again": {
			interval: time.Second,
			steps:    []step{{key: a, value: "a1"}, {advance: 1100 * time.Millisecond, key: a, value: ""}, {advance: time.Second, key: a, value: "a2"}},
			want:     []string{"a1", "a2"},
			left:     1,
		},
		"keys are throttled apart": {
			interval: time.Second,
			steps:    []step{{key: a, value: "a1"}, {key: b, value: "b1"}, {key: a, value: "a2"}},
			want:     []string{"a1", "b1"},
			left:     2,
		},
		"flush writes what is pending and forgets every key": {
			interval: time.Second,
			steps:    []step{{key: a, value: "a1"}, {key: a, value: "a2"}, {key: b, value: "b1"}},
			flush:    true,
			want:     []string{"a1", "b1", "a2"},
			left:     0,
		},
		"a negative interval writes every update": {
			interval: -1,
			steps:    []step{{key: a, value: "a1"}, {key: a, value: "a2"}},
			want:     []string{"a1", "a2"},
			left:     0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fc := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
			var mu sync.Mutex
			var got []string
			th := newThrottle(fc, tc.interval, func(v string) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, v)
			})
			for _, s := range tc.steps {
				fc.Step(s.advance)
				if s.value != "" {
					th.offer(s.key, s.value)
				}
			}
			for step := time.Duration(0); step < tc.final; step += 500 * time.Millisecond {
				fc.Step(500 * time.Millisecond)
			}
			if tc.flush {
				th.flush()
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			th.mu.Lock()
			defer th.mu.Unlock()
			if len(th.entries) != tc.left {
				t.Errorf("tracked keys = %d, want %d", len(th.entries), tc.left)
			}
		})
	}
}

// A key whose last tick wrote is kept for its next interval; once that passed quietly, the
// next sweep forgets it, so a long-running manager tracks only busy sessions.
func TestThrottleSweepsQuietKeys(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	writes := 0
	th := newThrottle(fc, time.Second, func(string) { writes++ })
	const keys = 70
	for i := range keys {
		key := types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)}
		th.offer(key, "first")
		th.offer(key, "second")
	}
	fc.Step(time.Second)     // every tick writes "second" and keeps the key
	fc.Step(2 * time.Second) // their next intervals pass with nothing pending
	th.offer(types.NamespacedName{Namespace: "ns", Name: "new"}, "first")
	if writes != 2*keys+1 {
		t.Errorf("writes = %d, want %d", writes, 2*keys+1)
	}
	if len(th.entries) != 1 {
		t.Errorf("tracked keys = %d, want 1 (only the new one)", len(th.entries))
	}
}
