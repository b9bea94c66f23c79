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

package provider

import (
	"context"
	"io"
	"time"

	"k8s.io/utils/clock"
)

// watchdog cancels an attempt that outlives its bound, or that hears nothing from the
// server for the idle bound: a model endpoint that accepts the connection and then hangs
// is cut off in a minute or two instead of holding the turn for the whole attempt bound.
type watchdog struct {
	poke chan struct{}
	done chan struct{}
}

// startWatchdog cancels with errAttemptTimeout after attempt and with errIdleTimeout after
// idle without a touch; a bound <= 0 is not watched.
func startWatchdog(c clock.WithTicker, attempt, idle time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{poke: make(chan struct{}, 1), done: make(chan struct{})}
	var attemptC, idleC <-chan time.Time
	var attemptT, idleT clock.Timer
	if attempt > 0 {
		attemptT = c.NewTimer(attempt)
		attemptC = attemptT.C()
	}
	if idle > 0 {
		idleT = c.NewTimer(idle)
		idleC = idleT.C()
	}
	go func() {
		defer func() {
			if attemptT != nil {
				attemptT.Stop()
			}
			if idleT != nil {
				idleT.Stop()
			}
		}()
		for {
			select {
			case <-w.done:
				return
			case <-attemptC:
				cancel(errAttemptTimeout)
				return
			case <-idleC:
				cancel(errIdleTimeout)
				return
			case <-w.poke:
				select {
				case <-idleC: // it fired before the bytes came: the silence was too long
					cancel(errIdleTimeout)
					return
				default:
				}
				if idleT != nil {
					idleT.Stop()
					idleT = c.NewTimer(idle)
					idleC = idleT.C()
				}
			}
		}
	}()
	return w
}

// touch says bytes arrived; it never blocks the reader.
func (w *watchdog) touch() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

func (w *watchdog) stop() { close(w.done) }

// boundedBody reads at most left bytes of a response, reporting progress; past the bound
// the response is malformed, whatever its format.
type boundedBody struct {
	r        io.Reader
	left     int64
	progress func()
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, malformed("response larger than %d bytes", MaxResponseBody)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if n > 0 && b.progress != nil {
		b.progress()
	}
	return n, err
}
