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

package userlimits

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// ErrRateLimited is wrapped by every refusal of Rates: the door answers 429.
var ErrRateLimited = errors.New("rate limit")

// Rates is a token bucket per user for the API calls the store makes on that user's behalf
// (impersonated calls, SubjectAccessReviews), so one user cannot take the store's whole
// client rate. A nil *Rates limits nobody.
type Rates struct {
	qps   rate.Limit
	burst int
	clock clock.PassiveClock
	mu    sync.Mutex
	users map[string]*rate.Limiter
}

// pruneAt is how many users' buckets are kept before the full ones (idle users) are dropped.
const pruneAt = 4096

// NewRates gives every user qps calls per second with bursts of burst; qps <= 0 is nil
// (no limit).
func NewRates(qps float64, burst int, c clock.PassiveClock) *Rates {
	if qps <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	if c == nil {
		c = clock.RealClock{}
	}
	return &Rates{qps: rate.Limit(qps), burst: burst, clock: c, users: map[string]*rate.Limiter{}}
}

func (r *Rates) bucket(user string) *rate.Limiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l, ok := r.users[user]; ok {
		return l
	}
	if len(r.users) >= pruneAt {
		now := r.clock.Now()
		for u, l := range r.users {
			if l.TokensAt(now) >= float64(r.burst) {
				delete(r.users, u)
			}
		}
	}
	l := rate.NewLimiter(r.qps, r.burst)
	r.users[user] = l
	return l
}

// Take takes one call from user's bucket, or returns an error wrapping ErrRateLimited.
func (r *Rates) Take(user string) error {
	if r == nil || r.bucket(user).AllowN(r.clock.Now(), 1) {
		return nil
	}
	return r.refusal(user)
}

// Exhausted reports, without taking one, whether user has no call left now: an error
// wrapping ErrRateLimited, else nil.
func (r *Rates) Exhausted(user string) error {
	if r == nil || r.bucket(user).TokensAt(r.clock.Now()) >= 1 {
		return nil
	}
	return r.refusal(user)
}

func (r *Rates) refusal(user string) error {
	return fmt.Errorf("%w: user %q is over %g API calls per second (burst %d) made on their behalf by the transcript-store; "+
		"slow down, or raise --api-qps-per-user / --api-burst-per-user", ErrRateLimited, user, float64(r.qps), r.burst)
}

// Limiter is user's bucket as a client-go rate limiter (rest.Config.RateLimiter): a call
// over the rate fails at once instead of queuing behind other users' calls.
func (r *Rates) Limiter(user string) flowcontrol.RateLimiter {
	return userLimiter{r: r, user: user}
}

type userLimiter struct {
	r    *Rates
	user string
}

func (l userLimiter) TryAccept() bool { return l.r.Take(l.user) == nil }

// Accept waits for a token (client-go's request path calls Wait, not Accept).
func (l userLimiter) Accept() { _ = l.r.bucket(l.user).Wait(context.Background()) }

func (l userLimiter) Stop() {}

func (l userLimiter) QPS() float32 { return float32(l.r.qps) }

func (l userLimiter) Wait(context.Context) error { return l.r.Take(l.user) }
