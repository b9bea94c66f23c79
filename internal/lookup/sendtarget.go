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

package lookup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// ErrMainWithoutRequester refuses the alias main (or global) in a send that has no requester
// (policy.MainWithoutRequester).
var ErrMainWithoutRequester = errors.New(policy.MainWithoutRequester)

// SendTargetKey is the session key a send's sessionKey ref names when the requester runs
// under requesterAgent ("" for a send with no requester): the aliases main and global are
// the requester's main key, anything else (a key or a sessionId) is itself.
func SendTargetKey(ref, requesterAgent string) (string, error) {
	if (ref == sessionkey.Main || ref == sessionkey.Global) && requesterAgent == "" {
		return "", ErrMainWithoutRequester
	}
	return sessionkey.Resolve(ref, requesterAgent), nil
}

// SendTarget is the session a send's ref names (see SendTargetKey and ResolveSession) and
// the key it names. The session is nil when none has that key or sessionId: the key is then
// the main session the controller creates on first send, or no session at all.
func (l Lookup) SendTarget(ctx context.Context, namespace, ref, requesterAgent string) (*sessionsv1alpha1.AgentSession, string, error) {
	key, err := SendTargetKey(ref, requesterAgent)
	if err != nil {
		return nil, "", err
	}
	s, err := l.ResolveSession(ctx, namespace, ref, requesterAgent)
	return s, key, err
}

// TargetRef is how a sessions_send names its target: a ref (key, sessionId or main), a label
// (the one active session with it) or an agent id (that agent's main session). At most one
// of them is given; none is an error.
type TargetRef struct {
	Ref, Label, AgentID string
	// Visible says the caller sees a session; a label is resolved among those only, so a
	// label carried only by sessions the caller does not see is not found, and no message
	// names a session it does not see. Nil: the caller sees every session it can list.
	Visible func(*sessionsv1alpha1.AgentSession) bool
}

// TargetRefKey is the ref a send's spec.sessionKey takes for t, which SendTarget then
// resolves as for any send: a label becomes the key of the one active session carrying it
// that the caller sees (t.Visible), an agent id its main key. A label carried by none of
// those, or by several, is an error that says so.
func (l Lookup) TargetRefKey(ctx context.Context, namespace string, t TargetRef) (string, error) {
	given := 0
	for _, v := range []string{t.Ref, t.Label, t.AgentID} {
		if v != "" {
			given++
		}
	}
	switch {
	case given == 0:
		return "", errors.New("name the target with one of sessionKey, label or agentId")
	case given > 1:
		return "", errors.New("name the target with only one of sessionKey, label or agentId")
	case t.AgentID != "":
		if !sessionkey.ValidAgentID(t.AgentID) {
			return "", fmt.Errorf("agentId %q is not a valid agent id", t.AgentID)
		}
		return sessionkey.MainKey(t.AgentID), nil
	case t.Label != "":
		return l.keyOfLabel(ctx, namespace, t.Label, t.Visible)
	}
	return t.Ref, nil
}

// keyOfLabel is the key of the one active session of namespace labelled label among those
// visible (nil: all).
func (l Lookup) keyOfLabel(ctx context.Context, namespace, label string, visible func(*sessionsv1alpha1.AgentSession) bool) (string, error) {
	var list sessionsv1alpha1.AgentSessionList
	if err := l.Cache.List(ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return "", err
	}
	var keys []string
	for i := range list.Items {
		s := &list.Items[i]
		if s.Spec.Label == label && s.Status.Phase != sessionsv1alpha1.SessionArchived && !sessionkey.IsReserved(s.Spec.Key) && (visible == nil || visible(s)) {
			keys = append(keys, s.Spec.Key)
		}
	}
	switch len(keys) {
	case 0:
		return "", fmt.Errorf("no active session has the label %q", label)
	case 1:
		return keys[0], nil
	}
	slices.Sort(keys)
	return "", fmt.Errorf("the label %q is on %d sessions (%s); name one by sessionKey", label, len(keys), strings.Join(keys, ", "))
}

// GatherSend reads what a send's admission and its controller both need (policy.SendFacts):
// the requester from (spec.fromSessionKey) and its Agent, the target ref names (or the
// main session a first send creates: policy.ImpliedSession, the one rule for it), and the
// namespace's SessionPolicy. ref is spec.sessionKey, or the key the controller resolved.
func (l Lookup) GatherSend(ctx context.Context, namespace, from, ref string) (policy.SendFacts, error) {
	f := policy.SendFacts{Namespace: namespace, From: from, Ref: ref, ParentOf: ParentOf(ctx, l.Cache, namespace)}
	var err error
	if from != "" {
		if f.Requester, err = l.SessionByKey(ctx, namespace, from); err != nil {
			return f, err
		}
		f.RequesterAgentID = sessionkey.AgentOf(from)
		if f.Requester != nil {
			f.RequesterAgentID = f.Requester.Spec.AgentID
		}
		if f.RequesterAgent, err = l.agent(ctx, namespace, f.RequesterAgentID); err != nil {
			return f, err
		}
	}
	f.Target, f.Key, err = l.SendTarget(ctx, namespace, ref, f.RequesterAgentID)
	if errors.Is(err, ErrMainWithoutRequester) {
		f.MainWithoutRequester = true
	} else if err != nil {
		return f, err
	}
	if f.Target == nil && !f.MainWithoutRequester {
		if f.KeyAgent, err = l.agent(ctx, namespace, sessionkey.AgentOf(f.Key)); err != nil {
			return f, err
		}
		f.Target = policy.ImpliedSession(f.Key, f.KeyAgent)
		f.Implied = f.Target != nil
	}
	f.Policy, err = l.SessionPolicy(ctx, namespace)
	return f, err
}

// agent is Agent, or nil for no id.
func (l Lookup) agent(ctx context.Context, namespace, id string) (*sessionsv1alpha1.Agent, error) {
	if id == "" {
		return nil, nil
	}
	return l.Agent(ctx, namespace, id)
}
