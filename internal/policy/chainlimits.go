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

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Defaults of spec.limits.maxSendsPerChain and maxPairRepeats. The hop limit bounds a
// chain's depth only: every reply-back turn of a tool-made send may fork it again, so two
// agents that send each other on any input made 130 sends in 40 seconds under maxHops
// alone. A chain of 20 holds a real delegation with room to spare; a pair seen twice is a
// loop on its second lap.
const (
	DefaultMaxSendsPerChain = 20
	DefaultMaxPairRepeats   = 2
)

// ChainMember is a send or spawn of a chain as the chain limits see it: who asked whom.
// Target is empty for a spawn (each spawn has a new child session, so it makes no pair).
type ChainMember struct {
	Requester, Target string
}

// Chain limit names, as the SessionPolicy spells them.
const (
	LimitMaxSendsPerChain = "maxSendsPerChain"
	LimitMaxPairRepeats   = "maxPairRepeats"
)

// ChainDenial says which chain limit a new member would pass and, in words a model can act
// on, what to do.
type ChainDenial struct {
	// Limit is LimitMaxSendsPerChain or LimitMaxPairRepeats.
	Limit   string
	Message string
}

// JudgeChainMember decides whether next may join a chain that already holds members (its
// root excluded: the root counts as one more). nil allows it.
func JudgeChainMember(members []ChainMember, next ChainMember, p *sessionsv1alpha1.SessionPolicySpec) *ChainDenial {
	maxSends, maxPairs := chainLimits(p)
	if n := len(members) + 1; n >= maxSends {
		return &ChainDenial{Limit: LimitMaxSendsPerChain, Message: fmt.Sprintf(
			"chain limit reached: this conversation chain already made %d sends and spawns (SessionPolicy spec.limits.maxSendsPerChain is %d); stop sending and spawning and answer with what you have",
			n, maxSends)}
	}
	if next.Target == "" {
		return nil
	}
	repeats := 0
	for _, m := range members {
		if m == next {
			repeats++
		}
	}
	if repeats >= maxPairs {
		return &ChainDenial{Limit: LimitMaxPairRepeats, Message: fmt.Sprintf(
			"chain limit reached: %s already sent to %s %d times in this conversation chain (SessionPolicy spec.limits.maxPairRepeats is %d), so the agents are going round in a loop; stop sending and answer with what you have",
			next.Requester, next.Target, repeats, maxPairs)}
	}
	return nil
}

// chainLimits are the policy's maxSendsPerChain and maxPairRepeats, or their defaults. p
// may be nil.
func chainLimits(p *sessionsv1alpha1.SessionPolicySpec) (maxSends, maxPairs int) {
	maxSends, maxPairs = DefaultMaxSendsPerChain, DefaultMaxPairRepeats
	if p == nil || p.Limits == nil {
		return maxSends, maxPairs
	}
	if l := p.Limits.MaxSendsPerChain; l != nil {
		maxSends = int(*l)
	}
	if l := p.Limits.MaxPairRepeats; l != nil {
		maxPairs = int(*l)
	}
	return maxSends, maxPairs
}

// NextChain is the chain of an object a session tool creates during a turn of its parent
// (the SessionSend or SubagentRun that owns the turn): the parent's chain, or the parent
// itself when it is a root. Labels carry the chain (ChainLabel) and annotations its root
// (ChainRootAnnotation, "<Kind>/<name>"). A parent without a UID (a turn nobody owns)
// makes the new object a root: nil, nil.
func NextChain(parentLabels, parentAnnotations map[string]string, parentUID, parentKind, parentName string) (labels, annotations map[string]string) {
	if chain, ok := parentLabels[sessionsv1alpha1.ChainLabel]; ok {
		return map[string]string{sessionsv1alpha1.ChainLabel: chain}, map[string]string{sessionsv1alpha1.ChainRootAnnotation: parentAnnotations[sessionsv1alpha1.ChainRootAnnotation]}
	}
	if parentUID == "" {
		return nil, nil
	}
	return map[string]string{sessionsv1alpha1.ChainLabel: parentUID}, map[string]string{sessionsv1alpha1.ChainRootAnnotation: parentKind + "/" + parentName}
}
