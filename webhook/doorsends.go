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

package webhook

import (
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// doorSends counts the sends the /a2a and /mcp doors made (DoorAnnotation) per target
// session and per caller over a sliding window: the backstop for a loop through a peer that
// drops the chain extension, where nothing carried says it is a loop. A key keeps the
// times of at most its limit's sends. The counts are per webhook replica, as the rate
// bucket is.
type doorSends struct {
	clock  clock.PassiveClock
	mu     sync.Mutex
	sends  map[string][]time.Time // by key, oldest first, all within the last window
	pruned time.Time
}

func newDoorSends(c clock.PassiveClock) *doorSends {
	return &doorSends{clock: c, sends: map[string][]time.Time{}}
}

// admit judges one more door-made send into session for user in ns under l, and counts it
// when allowed (record false: a dry run).
func (d *doorSends) admit(ns, session, user string, l policy.DoorLimits, record bool) *policy.ChainDenial {
	now := d.clock.Now()
	since := now.Add(-l.Window)
	sk, ck := "session\x00"+ns+"\x00"+session, "caller\x00"+ns+"\x00"+user
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.Sub(d.pruned) > time.Minute {
		for k, times := range d.sends {
			if len(times) == 0 || now.Sub(times[len(times)-1]) > 24*time.Hour || times[len(times)-1].Before(since) {
				delete(d.sends, k)
			}
		}
		d.pruned = now
	}
	recent := func(k string) []time.Time {
		times := d.sends[k]
		i := 0
		for i < len(times) && !times[i].After(since) {
			i++
		}
		return times[i:]
	}
	s, c := recent(sk), recent(ck)
	if den := policy.JudgeDoorSend(len(s), len(c), l); den != nil {
		return den
	}
	if record {
		d.sends[sk] = keep(append(s, now), l.PerSession)
		d.sends[ck] = keep(append(c, now), l.PerCaller)
	}
	return nil
}

// keep is the newest n of times.
func keep(times []time.Time, n int) []time.Time {
	if len(times) > n {
		return append([]time.Time(nil), times[len(times)-n:]...)
	}
	return times
}
