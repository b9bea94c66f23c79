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
	"strconv"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// DefaultMaxHops bounds a chain of tool-made sends and spawns when the SessionPolicy sets no
// spec.limits.maxHops: long enough for a delegation tree, short enough that two agents
// sending each other on every input stop within seconds.
const DefaultMaxHops = 8

// DefaultToolCreatesPerMinute is the operator's default for spec.limits.toolCreatesPerMinute.
const DefaultToolCreatesPerMinute = 120

// HopsOf reads an object's hop count from its annotations: 0 when absent, an error when the
// value is not a non-negative integer.
func HopsOf(annotations map[string]string) (int, error) {
	s, ok := annotations[sessionsv1alpha1.HopsAnnotation]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("annotation %s must be a non-negative integer, got %q", sessionsv1alpha1.HopsAnnotation, s)
	}
	return n, nil
}

// NextHops is the hop count of an object a session tool creates during a turn of parent (a
// SessionSend or SubagentRun), counting the hops a carried chain brought it; parent nil (a
// turn nobody owns) starts a chain at 1.
func NextHops(parentAnnotations map[string]string) int {
	n, err := HopsOf(parentAnnotations)
	if err != nil {
		// A malformed count never shortens a chain: the webhook refuses it anyway.
		return DefaultMaxHops + 1
	}
	// A parent that arrived through a door goes on from the hops its caller carried.
	if c, err := CarriedOf(parentAnnotations); err == nil && c != nil {
		n = max(n, c.Hops)
	}
	return n + 1
}

// MaxHops is the policy's hop limit, DefaultMaxHops when unset. p may be nil.
func MaxHops(p *sessionsv1alpha1.SessionPolicySpec) int {
	if p != nil && p.Limits != nil && p.Limits.MaxHops != nil {
		return int(*p.Limits.MaxHops)
	}
	return DefaultMaxHops
}

// CheckHops returns a denial when hops is over the policy's limit, else "".
func CheckHops(hops int, p *sessionsv1alpha1.SessionPolicySpec) string {
	if limit := MaxHops(p); hops > limit {
		return fmt.Sprintf("hop limit: this is hop %d of a chain of agent tool calls and SessionPolicy spec.limits.maxHops is %d; raise spec.limits.maxHops to allow longer chains",
			hops, limit)
	}
	return ""
}

// ToolCreatesPerMinute is the namespace's rate of tool-made sends and spawns: the policy's,
// else the operator's default. p may be nil.
func ToolCreatesPerMinute(p *sessionsv1alpha1.SessionPolicySpec, operatorDefault int) int {
	if p != nil && p.Limits != nil && p.Limits.ToolCreatesPerMinute != nil {
		return int(*p.Limits.ToolCreatesPerMinute)
	}
	return operatorDefault
}

// RateDenial is the message of a tool-made send or spawn over the namespace's rate.
func RateDenial(perMinute int) string {
	return fmt.Sprintf("rate limit: this namespace's agent tools may create %d SessionSends and SubagentRuns per minute (SessionPolicy spec.limits.toolCreatesPerMinute); wait, or raise spec.limits.toolCreatesPerMinute",
		perMinute)
}
