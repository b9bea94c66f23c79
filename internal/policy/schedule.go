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
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// MaxMissedStartTimes is how many missed ticks a schedule counts before it gives up
// counting and reports too many missed start times, as batch/v1 CronJob does (100).
const MaxMissedStartTimes = 100

// ParseSchedule reads a SessionSchedule's spec.schedule in spec.timeZone (empty: UTC) as
// CronJob does: five standard fields or a macro, parsed by robfig/cron; the time zone is
// its own field, so a TZ= or CRON_TZ= prefix is refused. The error is the parser's message.
func ParseSchedule(schedule, timeZone string) (cron.Schedule, error) {
	if strings.Contains(schedule, "TZ") {
		return nil, errors.New("cannot use TZ or CRON_TZ in schedule, use the timeZone field instead")
	}
	if timeZone != "" {
		if _, err := time.LoadLocation(timeZone); err != nil {
			return nil, fmt.Errorf("unknown time zone %q: %w", timeZone, err)
		}
		// LoadLocation accepts "Local": the manager's own zone is no zone of the schedule's.
		if timeZone == "Local" {
			return nil, errors.New(`unknown time zone "Local": give an IANA name such as Europe/Berlin`)
		}
		schedule = "CRON_TZ=" + timeZone + " " + schedule
	}
	return cron.ParseStandard(schedule)
}

// ScheduleInput is what a tick decision reads of a SessionSchedule.
type ScheduleInput struct {
	Schedule cron.Schedule
	// Created is the schedule's creation time; LastSchedule its status.lastScheduleTime.
	Created      time.Time
	LastSchedule *time.Time
	// StartingDeadline is spec.startingDeadlineSeconds; nil has none.
	StartingDeadline *time.Duration
	Now              time.Time
}

// TickDecision is what a schedule does now.
type TickDecision struct {
	// Due is the most recent tick that has come and was not sent; zero when none.
	Due time.Time
	// Missed counts the unsent ticks up to now (Due among them), at most MaxMissedStartTimes+1.
	Missed int
	// TooMany says more than MaxMissedStartTimes ticks were missed.
	TooMany bool
	// TooLate says Due is past the starting deadline: it is skipped, not sent.
	TooLate bool
	// Next is the first tick after now.
	Next time.Time
}

// DecideTick applies CronJob's rules: only the most recent missed tick is sent (at most one
// catch-up after a downtime), ticks before now minus the starting deadline are not counted,
// and a tick later than its deadline is skipped. Ticks are whole minutes, so a restarted
// manager derives the same Due, and the send named from it, again.
func DecideTick(in ScheduleInput) TickDecision {
	earliest := in.Created
	if in.LastSchedule != nil {
		earliest = *in.LastSchedule
	}
	if in.StartingDeadline != nil {
		if d := in.Now.Add(-*in.StartingDeadline); d.After(earliest) {
			earliest = d
		}
	}
	var d TickDecision
	for t := in.Schedule.Next(earliest); !t.IsZero() && !t.After(in.Now); t = in.Schedule.Next(t) {
		d.Due = t
		d.Missed++
		if d.Missed > MaxMissedStartTimes {
			d.TooMany = true
			// Jump to the last tick before now without counting on: the earliest tick is an
			// hour, a day, a year of minutes ago after a long downtime.
			d.Due = lastTickBefore(in.Schedule, in.Now, t)
			break
		}
	}
	d.Next = in.Schedule.Next(in.Now)
	if !d.Due.IsZero() && in.StartingDeadline != nil && d.Due.Add(*in.StartingDeadline).Before(in.Now) {
		d.TooLate = true
	}
	return d
}

// lastTickBefore finds the last tick at or before now, searching back from now in growing
// steps (a tick known to be at or before now is from).
func lastTickBefore(s cron.Schedule, now, from time.Time) time.Time {
	for step := time.Minute; ; step *= 2 {
		start := now.Add(-step)
		if !start.After(from) {
			start = from
		}
		if t := s.Next(start.Add(-time.Second)); !t.IsZero() && !t.After(now) {
			for n := s.Next(t); !n.IsZero() && !n.After(now); n = s.Next(n) {
				t = n
			}
			return t
		}
		if !start.After(from) {
			return from
		}
	}
}

// ScheduledSendName is the name of the send of a tick: <schedule>-<unix minutes>, as a
// CronJob names its Jobs, so that a tick is sent once whoever asks again.
func ScheduledSendName(schedule string, tick time.Time) string {
	return fmt.Sprintf("%s-%d", schedule, tick.Unix()/60)
}

// ConcurrencyAction is what a due tick does about the sends still running.
type ConcurrencyAction string

const (
	// TickSend sends the tick.
	TickSend ConcurrencyAction = "send"
	// TickSkip skips the tick (Forbid while a send runs).
	TickSkip ConcurrencyAction = "skip"
	// TickReplace cancels the running sends, then sends the tick.
	TickReplace ConcurrencyAction = "replace"
)

// DecideConcurrency applies a schedule's concurrencyPolicy to a due tick: Allow sends,
// Forbid skips while any send runs, Replace cancels the running ones and sends.
func DecideConcurrency(policy string, running int) ConcurrencyAction {
	if running == 0 {
		return TickSend
	}
	switch policy {
	case "Forbid":
		return TickSkip
	case "Replace":
		return TickReplace
	}
	return TickSend
}

// ScheduleAgentMissing is what a schedule whose spec.agentId names no Agent of its namespace
// is told, at admission (a warning) and in its Ready condition: its ticks wait for the Agent
// rather than send into agent:<missing>:main.
func ScheduleAgentMissing(agentID, namespace string) string {
	return fmt.Sprintf("Agent %s does not exist in namespace %s: no tick is sent until it does (create the Agent or fix spec.agentId)", agentID, namespace)
}
