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
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// doorSends counts the sends the /a2a and /mcp doors made (DoorAnnotation) per target
// session and per caller in windows aligned since the Unix epoch: the backstop for a loop
// through a peer that drops the chain extension, where nothing carried says it is a loop.
// The counts are per webhook replica, as the rate bucket is; across a window's edge a loop
// may make up to twice a limit before it stops.
type doorSends struct {
	clock  clock.PassiveClock
	mu     sync.Mutex
	counts map[string]windowCount
	pruned time.Time
}

type windowCount struct {
	start time.Time
	n     int
}

func newDoorSends(c clock.PassiveClock) *doorSends {
	return &doorSends{clock: c, counts: map[string]windowCount{}}
}

// admit judges one more door-made send into session for user in ns under l, and counts it
// when allowed (record false: a dry run).
func (d *doorSends) admit(ns, session, user string, l policy.DoorLimits, record bool) *policy.ChainDenial {
	now := d.clock.Now()
	start := usage.WindowStart(now, l.Window)
	sk, ck := "session\x00"+ns+"\x00"+session, "caller\x00"+ns+"\x00"+user
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.Sub(d.pruned) > time.Minute {
		for k, c := range d.counts {
			if now.Sub(c.start) > 24*time.Hour || (c.start.Before(start) && now.Sub(c.start) > l.Window) {
				delete(d.counts, k)
			}
		}
		d.pruned = now
	}
	n := func(k string) int {
		if c := d.counts[k]; c.start.Equal(start) {
			return c.n
		}
		return 0
	}
	if den := policy.JudgeDoorSend(n(sk), n(ck), l); den != nil {
		return den
	}
	if record {
		d.counts[sk] = windowCount{start: start, n: n(sk) + 1}
		d.counts[ck] = windowCount{start: start, n: n(ck) + 1}
	}
	return nil
}
