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

package server

import "time"

// sseWriteTimeout bounds one write to a stream's client: a stuck client must not pin the
// handler forever.
const sseWriteTimeout = 30 * time.Second

// deadlineSlack is how far a write's deadline may fall short of sseWriteTimeout. Moving the
// connection's deadline re-arms a runtime timer; with a busy session fanned out to many
// followers that was a measurable share of each delivery, so it moves at most once per slack.
const deadlineSlack = time.Second

// nextWriteDeadline says whether a write starting at now needs a new deadline, given the one
// set (cur, zero when none), and returns it. Every write gets at least
// sseWriteTimeout-deadlineSlack and at most sseWriteTimeout.
func nextWriteDeadline(cur, now time.Time) (time.Time, bool) {
	if left := cur.Sub(now); !cur.IsZero() && left >= sseWriteTimeout-deadlineSlack && left <= sseWriteTimeout {
		return cur, false
	}
	return now.Add(sseWriteTimeout), true
}
