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

package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The follow figure times from each record's own append timestamp, read from each system's
// SSE event; a snapshot or keepalive carries none.
func TestAppendTimestampsFromEvents(t *testing.T) {
	ms := time.UnixMilli(1795514444615)
	ts := time.Date(2026, 11, 24, 10, 0, 0, 123456789, time.UTC)
	cases := map[string]struct {
		parse       func(event, data string) []time.Time
		event, data string
		want        []time.Time
	}{
		"ours: a message event": {ourAppended, "message",
			`{"seq":7,"id":"r7","ts":"2026-11-24T10:00:00.123456789Z","message":{"role":"assistant"}}`, []time.Time{ts}},
		"ours: the history snapshot": {ourAppended, "history", `{"messages":[]}`, nil},
		"openclaw: appended items": {theirAppended, "history",
			`{"sessionKey":"k","items":[{"role":"user","__openclaw":{"recordTimestampMs":1795514444615,"seq":5}},{"role":"assistant","__openclaw":{"recordTimestampMs":1795514444615}}]}`,
			[]time.Time{ms, ms}},
		"openclaw: another event":               {theirAppended, "tick", `{}`, nil},
		"openclaw: an item without a timestamp": {theirAppended, "history", `{"items":[{"role":"user"}]}`, nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, c.parse(c.event, c.data)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
