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
	"fmt"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Defaults of the door backstop (spec.limits.doorSendsPerSession, doorSendsPerCaller,
// doorSendWindow). A person or a program talking to an agent through /a2a or /mcp sends a
// few messages a minute; a loop through a peer that drops the chain extension sends several
// a second. 20 sends a minute per caller also keeps a loop of nested A2A calls (each holding
// a turn while it waits) under the namespace's turn slots.
const (
	DefaultDoorSendsPerSession = 10
	DefaultDoorSendsPerCaller  = 20
	DefaultDoorSendWindow      = time.Minute
)

// Door limit names, as the SessionPolicy spells them.
const (
	LimitDoorSendsPerSession = "doorSendsPerSession"
	LimitDoorSendsPerCaller  = "doorSendsPerCaller"
)

// DoorLimits are the backstop's bounds: sends the doors make into one session, and for one
// caller, per window.
type DoorLimits struct {
	PerSession, PerCaller int
	Window                time.Duration
}

// DoorSendLimits are p's door limits, or their defaults. p may be nil.
func DoorSendLimits(p *sessionsv1alpha1.SessionPolicySpec) DoorLimits {
	l := DoorLimits{PerSession: DefaultDoorSendsPerSession, PerCaller: DefaultDoorSendsPerCaller, Window: DefaultDoorSendWindow}
	if p == nil || p.Limits == nil {
		return l
	}
	if v := p.Limits.DoorSendsPerSession; v != nil {
		l.PerSession = int(*v)
	}
	if v := p.Limits.DoorSendsPerCaller; v != nil {
		l.PerCaller = int(*v)
	}
	if w := p.Limits.DoorSendWindow; w != nil && w.Duration >= time.Second {
		l.Window = w.Duration
	}
	return l
}

// JudgeDoorSend decides whether a door may make one more send, given how many it made in
// the current window into the same session and for the same caller. nil allows it.
func JudgeDoorSend(intoSession, byCaller int, l DoorLimits) *ChainDenial {
	const then = "; a loop through an agent server that does not carry the chain extension is stopped here, wait for the window to pass or ask a namespace admin to raise the limit"
	if intoSession >= l.PerSession {
		return &ChainDenial{Limit: LimitDoorSendsPerSession, Message: fmt.Sprintf(
			"door limit reached: the /a2a and /mcp doors already made %d sends into this session in the last %s (SessionPolicy spec.limits.doorSendsPerSession is %d)%s",
			intoSession, l.Window, l.PerSession, then)}
	}
	if byCaller >= l.PerCaller {
		return &ChainDenial{Limit: LimitDoorSendsPerCaller, Message: fmt.Sprintf(
			"door limit reached: this caller already made %d sends through the /a2a and /mcp doors in the last %s (SessionPolicy spec.limits.doorSendsPerCaller is %d)%s",
			byCaller, l.Window, l.PerCaller, then)}
	}
	return nil
}
