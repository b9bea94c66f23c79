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

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"
)

// toolRate is the per-namespace token bucket of tool-made SessionSends and SubagentRuns.
//
// It lives in the webhook, not in the session tools: every tool-made object passes here
// (identified by the manager's hop annotation), next to the SessionPolicy it is configured
// by, and a denial reaches the model as the same forbidden tool result as every other policy
// denial. A bucket is per webhook replica; with N replicas serving, a namespace gets up to N
// times its rate (docs/operations/security.md). Dry runs and objects denied for another reason take no
// token, as the bucket is consulted last.
type toolRate struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	ns    map[string]*rate.Limiter
}

func newToolRate(c clock.PassiveClock) *toolRate {
	if c == nil {
		c = clock.RealClock{}
	}
	return &toolRate{clock: c, ns: map[string]*rate.Limiter{}}
}

// allow takes one token from namespace ns's bucket, which refills perMinute tokens a minute
// up to a burst of perMinute.
func (t *toolRate) allow(ns string, perMinute int) bool {
	now := t.clock.Now()
	limit := rate.Limit(float64(perMinute) / time.Minute.Seconds())
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.ns[ns]
	if !ok {
		l = rate.NewLimiter(limit, perMinute)
		t.ns[ns] = l
	} else if l.Limit() != limit || l.Burst() != perMinute {
		l.SetLimitAt(now, limit)
		l.SetBurstAt(now, perMinute)
	}
	return l.AllowN(now, 1)
}
