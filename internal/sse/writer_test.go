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

package sse

import (
	"testing"
	"time"
)

func TestNextWriteDeadline(t *testing.T) {
	now := time.Unix(1000, 0)
	cases := map[string]struct {
		cur       time.Time
		want      time.Time
		wantMoved bool
	}{
		"none set yet":              {cur: time.Time{}, want: now.Add(WriteTimeout), wantMoved: true},
		"just set":                  {cur: now.Add(WriteTimeout), want: now.Add(WriteTimeout)},
		"set within the slack":      {cur: now.Add(WriteTimeout - deadlineSlack), want: now.Add(WriteTimeout - deadlineSlack)},
		"set longer ago":            {cur: now.Add(WriteTimeout - deadlineSlack - time.Nanosecond), want: now.Add(WriteTimeout), wantMoved: true},
		"passed (an idle stream)":   {cur: now.Add(-time.Minute), want: now.Add(WriteTimeout), wantMoved: true},
		"clock went back (far out)": {cur: now.Add(time.Hour), want: now.Add(WriteTimeout), wantMoved: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, moved := nextWriteDeadline(tc.cur, now)
			if !got.Equal(tc.want) || moved != tc.wantMoved {
				t.Errorf("nextWriteDeadline(now%+v, now) = now%+v, %v; want now%+v, %v",
					tc.cur.Sub(now), got.Sub(now), moved, tc.want.Sub(now), tc.wantMoved)
			}
			// Whatever it decides, a write starting now gets the timeout, less at most the slack.
			if left := got.Sub(now); left < WriteTimeout-deadlineSlack || left > WriteTimeout {
				t.Errorf("a write starting now would get %v", left)
			}
		})
	}
}
