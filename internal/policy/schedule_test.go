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

package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSchedule(t *testing.T) {
	cases := map[string]struct {
		schedule, zone string
		wantErr        string
	}{
		"five fields":            {schedule: "*/5 * * * *"},
		"a macro":                {schedule: "@hourly"},
		"a zone":                 {schedule: "30 2 * * *", zone: "Europe/Berlin"},
		"six fields":             {schedule: "0 */5 * * * *", wantErr: "expected exactly 5 fields, found 6"},
		"a bad minute":           {schedule: "61 * * * *", wantErr: "end of range (61) above maximum (59)"},
		"an unknown zone":        {schedule: "@daily", zone: "Mars/Olympus", wantErr: `unknown time zone "Mars/Olympus"`},
		"the manager's zone":     {schedule: "@daily", zone: "Local", wantErr: `unknown time zone "Local"`},
		"a zone in the schedule": {schedule: "CRON_TZ=UTC @daily", wantErr: "use the timeZone field"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseSchedule(tc.schedule, tc.zone)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || tc.wantErr != "" && !strings.Contains(got, tc.wantErr) {
				t.Errorf("error %q, want one containing %q", got, tc.wantErr)
			}
		})
	}
}

func TestDecideTick(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tp := func(s string) *time.Time { v := at(s); return &v }
	dur := func(d time.Duration) *time.Duration { return &d }
	everyMinute, _ := ParseSchedule("* * * * *", "")
	// 02:30 every day in Berlin: on 2026-03-29 the clocks jump from 02:00 to 03:00, so that
	// day has no 02:30; on 2026-10-25 they go back from 03:00 to 02:00.
	berlin, _ := ParseSchedule("30 2 * * *", "Europe/Berlin")
	daily9, _ := ParseSchedule("0 9 * * *", "Europe/Berlin")
	type want struct {
		Due, Next        time.Time
		Missed           int
		TooMany, TooLate bool
	}
	cases := map[string]struct {
		in   ScheduleInput
		want want
	}{
		"nothing due before the first tick": {
			in:   ScheduleInput{Schedule: everyMinute, Created: at("2026-01-01T10:00:30Z"), Now: at("2026-01-01T10:00:50Z")},
			want: want{Next: at("2026-01-01T10:01:00Z")},
		},
		"the first tick": {
			in:   ScheduleInput{Schedule: everyMinute, Created: at("2026-01-01T10:00:30Z"), Now: at("2026-01-01T10:01:02Z")},
			want: want{Due: at("2026-01-01T10:01:00Z"), Missed: 1, Next: at("2026-01-01T10:02:00Z")},
		},
		"a tick already sent is not due again": {
			in: ScheduleInput{Schedule: everyMinute, Created: at("2026-01-01T10:00:30Z"), LastSchedule: tp("2026-01-01T10:01:00Z"),
				Now: at("2026-01-01T10:01:40Z")},
			want: want{Next: at("2026-01-01T10:02:00Z")},
		},
		"after a downtime only the most recent missed tick is sent": {
			in: ScheduleInput{Schedule: everyMinute, Created: at("2026-01-01T10:00:00Z"), LastSchedule: tp("2026-01-01T10:01:00Z"),
				Now: at("2026-01-01T10:20:30Z")},
			want: want{Due: at("2026-01-01T10:20:00Z"), Missed: 19, Next: at("2026-01-01T10:21:00Z")},
		},
		"the deadline bounds the count": {
			in: ScheduleInput{Schedule: everyMinute, Created: at("2026-01-01T10:00:00Z"), LastSchedule: tp("2026-01-01T10:01:00Z"),
				StartingDeadline: dur(200 * time.Second), Now: at("2026-01-01T10:20:30Z")},
			want: want{Due: at("2026-01-01T10:20:00Z"), Missed: 3, Next: at("2026-01-01T10:21:00Z")},
		},
		"a tick past its deadline is too late": {
			in: ScheduleInput{Schedule: daily9, Created: at("2026-01-01T00:00:00Z"), LastSchedule: tp("2026-01-01T08:00:00Z"),
				StartingDeadline: dur(time.Hour), Now: at("2026-01-02T09:30:00Z")},
			want: want{Next: at("2026-01-03T08:00:00Z")},
		},
		"a tick within its deadline is sent late": {
			in: ScheduleInput{Schedule: daily9, Created: at("2026-01-01T00:00:00Z"), LastSchedule: tp("2026-01-01T08:00:00Z"),
				StartingDeadline: dur(2 * time.Hour), Now: at("2026-01-02T09:30:00Z")},
			want: want{Due: at("2026-01-02T08:00:00Z"), Missed: 1, Next: at("2026-01-03T08:00:00Z")},
		},
		"too many missed start times": {
			in: ScheduleInput{Schedule: everyMinute, Created: at("2026-01-01T00:00:00Z"), LastSchedule: tp("2026-01-01T00:00:00Z"),
				Now: at("2026-01-03T07:42:10Z")},
			want: want{Due: at("2026-01-03T07:42:00Z"), Missed: MaxMissedStartTimes + 1, TooMany: true, Next: at("2026-01-03T07:43:00Z")},
		},
		"spring forward: no 02:30 that day, the next is the day after": {
			in: ScheduleInput{Schedule: berlin, Created: at("2026-03-28T12:00:00Z"), LastSchedule: tp("2026-03-28T01:30:00Z"),
				Now: at("2026-03-29T12:00:00Z")},
			want: want{Next: at("2026-03-30T00:30:00Z")},
		},
		"spring forward: the day after ticks at 02:30 summer time": {
			in: ScheduleInput{Schedule: berlin, Created: at("2026-03-28T12:00:00Z"), LastSchedule: tp("2026-03-28T01:30:00Z"),
				Now: at("2026-03-30T00:30:05Z")},
			want: want{Due: at("2026-03-30T00:30:00Z"), Missed: 1, Next: at("2026-03-31T00:30:00Z")},
		},
		// robfig/cron, and so CronJob, reads 02:30 on the clock: the repeated hour has one too.
		"fall back: 02:30 summer time, then 02:30 winter time": {
			in: ScheduleInput{Schedule: berlin, Created: at("2026-10-24T12:00:00Z"), LastSchedule: tp("2026-10-25T00:30:00Z"),
				Now: at("2026-10-25T01:45:00Z")},
			want: want{Due: at("2026-10-25T01:30:00Z"), Missed: 1, Next: at("2026-10-26T01:30:00Z")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := DecideTick(tc.in)
			got := want{Due: d.Due, Next: d.Next, Missed: d.Missed, TooMany: d.TooMany, TooLate: d.TooLate}
			if d.TooLate {
				got.Due, got.Missed = time.Time{}, 0
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecideTick (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideConcurrency(t *testing.T) {
	cases := map[string]struct {
		policy  string
		running int
		want    ConcurrencyAction
	}{
		"nothing runs":   {policy: "Forbid", running: 0, want: TickSend},
		"allow":          {policy: "Allow", running: 2, want: TickSend},
		"forbid":         {policy: "Forbid", running: 1, want: TickSkip},
		"replace":        {policy: "Replace", running: 1, want: TickReplace},
		"unset is allow": {policy: "", running: 1, want: TickSend},
	}
	for name, tc := range cases {
		if got := DecideConcurrency(tc.policy, tc.running); got != tc.want {
			t.Errorf("%s: got %s, want %s", name, got, tc.want)
		}
	}
}

func TestScheduledSendName(t *testing.T) {
	tick := time.Date(2026, 1, 1, 10, 1, 0, 0, time.UTC)
	if got, want := ScheduledSendName("digest", tick), "digest-29454361"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
