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

package webhook

import (
	"context"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// chainIdle is how long a chain's tally stays in memory after its last member: a chain
// that goes on later is counted again from the API server.
const chainIdle = 10 * time.Minute

// chainLedger holds the members of the chains the webhook admits, to judge each new member
// against the chain limits.
//
// Not from the informer cache: the manager does not cache finished SessionSends, and a
// storm's sends finish within milliseconds. A chain seen for the first time (or again
// after chainIdle) is listed once from the API server by its label; from then on each
// admitted member is recorded here, under the chain's lock, so concurrent members of one
// chain (a reply-back fork) are judged one after the other. The tally is per webhook
// replica, as the rate bucket is: with N replicas a chain may reach N times its limit.
type chainLedger struct {
	clock  clock.PassiveClock
	api    client.Reader
	events recorder.EventRecorder

	mu     sync.Mutex
	chains map[string]*chainTally // by namespace/chain
	pruned time.Time
}

type chainTally struct {
	mu      sync.Mutex
	listed  bool
	members map[string]policy.ChainMember // by object kind/name
	warned  map[string]bool               // chain limits the root was told about
	seen    time.Time
}

func newChainLedger(c clock.PassiveClock, api client.Reader, events recorder.EventRecorder) *chainLedger {
	if c == nil {
		c = clock.RealClock{}
	}
	return &chainLedger{clock: c, api: api, events: events, chains: map[string]*chainTally{}}
}

// tally returns the chain's tally, locked; the caller unlocks it.
func (l *chainLedger) tally(ns, chain string) *chainTally {
	now := l.clock.Now()
	l.mu.Lock()
	if now.Sub(l.pruned) > time.Minute {
		for k, t := range l.chains {
			if t.mu.TryLock() {
				if now.Sub(t.seen) > chainIdle {
					delete(l.chains, k)
				}
				t.mu.Unlock()
			}
		}
		l.pruned = now
	}
	t, ok := l.chains[ns+"/"+chain]
	if !ok {
		t = &chainTally{members: map[string]policy.ChainMember{}, warned: map[string]bool{}}
		l.chains[ns+"/"+chain] = t
	}
	l.mu.Unlock()
	t.mu.Lock()
	t.seen = now
	return t
}

// admit judges obj, a tool-made member of a chain, against the policy's chain limits and
// records it when allowed (record false: a dry run). It returns the denial's message, or "".
// The root of a denied chain gets a Warning Event naming the limit, once per limit.
func (l *chainLedger) admit(ctx context.Context, obj client.Object, member policy.ChainMember, p *sessionsv1alpha1.SessionPolicySpec, record bool) (string, error) {
	chain := obj.GetLabels()[sessionsv1alpha1.ChainLabel]
	t := l.tally(obj.GetNamespace(), chain)
	defer t.mu.Unlock()
	if !t.listed {
		if err := l.list(ctx, t, obj.GetNamespace(), chain); err != nil {
			return "", err
		}
	}
	name := memberName(obj)
	members := make([]policy.ChainMember, 0, len(t.members))
	for k, m := range t.members {
		if k != name { // a create retried under the same name is the same member
			members = append(members, m)
		}
	}
	if d := policy.JudgeChainMember(members, member, p); d != nil {
		if !t.warned[d.Limit] {
			t.warned[d.Limit] = true
			l.warnRoot(obj, d.Limit)
		}
		return d.Message, nil
	}
	if record {
		t.members[name] = member
	}
	return "", nil
}

// forget drops a member admit recorded that a later check denied.
func (l *chainLedger) forget(obj client.Object) {
	t := l.tally(obj.GetNamespace(), obj.GetLabels()[sessionsv1alpha1.ChainLabel])
	delete(t.members, memberName(obj))
	t.mu.Unlock()
}

// list reads the chain's members from the API server.
func (l *chainLedger) list(ctx context.Context, t *chainTally, ns, chain string) error {
	in := []client.ListOption{client.InNamespace(ns), client.MatchingLabels{sessionsv1alpha1.ChainLabel: chain}}
	var sends sessionsv1alpha1.SessionSendList
	if err := l.api.List(ctx, &sends, in...); err != nil {
		return err
	}
	var runs sessionsv1alpha1.SubagentRunList
	if err := l.api.List(ctx, &runs, in...); err != nil {
		return err
	}
	for i := range sends.Items {
		s := &sends.Items[i]
		t.members[memberName(s)] = sendMember(s, s.TargetKey())
	}
	for i := range runs.Items {
		t.members[memberName(&runs.Items[i])] = policy.ChainMember{Requester: runs.Items[i].Spec.RequesterSessionKey}
	}
	t.listed = true
	return nil
}

// sendMember is a send as the chain limits see it: requester and target session keys. target
// is the resolved key when known; else the spec's key, resolved against the requester's agent.
func sendMember(s *sessionsv1alpha1.SessionSend, target string) policy.ChainMember {
	if target == "" {
		target = sessionkey.Resolve(s.Spec.SessionKey, sessionkey.AgentOf(s.Spec.FromSessionKey))
	}
	return policy.ChainMember{Requester: s.Spec.FromSessionKey, Target: target}
}

func memberName(obj client.Object) string {
	kind := "SessionSend/"
	if _, run := obj.(*sessionsv1alpha1.SubagentRun); run {
		kind = "SubagentRun/"
	}
	return kind + obj.GetName()
}

// warnRoot records a Warning Event on the chain's root naming the limit it hit.
func (l *chainLedger) warnRoot(obj client.Object, limit string) {
	kind, name, ok := strings.Cut(obj.GetAnnotations()[sessionsv1alpha1.ChainRootAnnotation], "/")
	if l.events == nil || !ok {
		return
	}
	meta := metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: name, UID: types.UID(obj.GetLabels()[sessionsv1alpha1.ChainLabel])}
	var root client.Object
	switch kind {
	case "SessionSend":
		root = &sessionsv1alpha1.SessionSend{ObjectMeta: meta}
	case "SubagentRun":
		root = &sessionsv1alpha1.SubagentRun{ObjectMeta: meta}
	default:
		return
	}
	l.events.Eventf(root, nil, corev1.EventTypeWarning, "ChainLimitReached", "Admit",
		"the chain of agent tool calls started by this %s reached SessionPolicy spec.limits.%s; its further sends and spawns are refused", kind, limit)
}
