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

package sessionsend

import (
	"time"

	"k8s.io/utils/clock"
)

// PollClock tells the time of an injected clock but waits on real timers of at most ttlPoll,
// so whoever waits on it reads the injected clock again at least every ttlPoll: a jump of
// that clock (a test's fake step) is seen without a timer on it.
type PollClock struct {
	clock.PassiveClock
}

var _ clock.WithTicker = PollClock{}

var wall clock.RealClock

func capped(d time.Duration) time.Duration { return min(max(d, time.Nanosecond), ttlPoll) }

func (PollClock) After(d time.Duration) <-chan time.Time { return wall.After(capped(d)) }
func (PollClock) NewTimer(d time.Duration) clock.Timer   { return wall.NewTimer(capped(d)) }
func (PollClock) Sleep(d time.Duration)                  { wall.Sleep(capped(d)) }
func (PollClock) Tick(d time.Duration) <-chan time.Time  { return wall.Tick(capped(d)) }
func (PollClock) NewTicker(d time.Duration) clock.Ticker { return wall.NewTicker(capped(d)) }
