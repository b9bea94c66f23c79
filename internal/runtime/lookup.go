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

package runtime

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// errSessionNotFound is wrapped by lookups of a key or id no session has.
type errSessionNotFound struct{ ref string }

func (e errSessionNotFound) Error() string { return fmt.Sprintf("session %q not found", e.ref) }

// sessionByKey finds the session with key in the cache. Sessions are named
// sessionkey.ObjectName(key), so this is one cache Get; a session named otherwise (created
// by hand) is found by a scan of the namespace.
func (e *Engine) sessionByKey(ctx context.Context, namespace, key string) (*sessionsv1alpha1.AgentSession, error) {
	s := &sessionsv1alpha1.AgentSession{}
	err := e.opts.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: sessionkey.ObjectName(key)}, s)
	switch {
	case err == nil && s.Spec.Key == key:
		return s, nil
	case err != nil && !apierrors.IsNotFound(err):
		return nil, err
	}
	return e.findSession(ctx, namespace, key, func(s *sessionsv1alpha1.AgentSession) bool { return s.Spec.Key == key })
}

// resolveSession finds a session by key, sessionId, or the alias main/global (of agentID).
func (e *Engine) resolveSession(ctx context.Context, namespace, ref, agentID string) (*sessionsv1alpha1.AgentSession, error) {
	key := sessionkey.Resolve(ref, agentID)
	s, err := e.sessionByKey(ctx, namespace, key)
	if _, missing := err.(errSessionNotFound); !missing {
		return s, err
	}
	return e.findSession(ctx, namespace, ref, func(s *sessionsv1alpha1.AgentSession) bool { return s.Status.SessionID == ref })
}

func (e *Engine) findSession(ctx context.Context, namespace, ref string, match func(*sessionsv1alpha1.AgentSession) bool) (*sessionsv1alpha1.AgentSession, error) {
	var list sessionsv1alpha1.AgentSessionList
	if err := e.opts.Reader.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if match(&list.Items[i]) {
			return &list.Items[i], nil
		}
	}
	return nil, errSessionNotFound{ref}
}

// agent reads an Agent (its name is the agent id), from the cache or, on a miss, the API.
func (e *Engine) agent(ctx context.Context, namespace, id string) (*sessionsv1alpha1.Agent, error) {
	a, err := lookup.Agent(ctx, e.opts.Reader, e.opts.APIReader, namespace, id)
	if err == nil && a == nil {
		err = fmt.Errorf("agent %q not found", id)
	}
	return a, err
}

// sessionPolicy reads the namespace's SessionPolicy "default"; none is the zero policy.
func (e *Engine) sessionPolicy(ctx context.Context, namespace string) (*sessionsv1alpha1.SessionPolicy, error) {
	p := &sessionsv1alpha1.SessionPolicy{}
	err := e.opts.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: "default"}, p)
	if apierrors.IsNotFound(err) {
		return &sessionsv1alpha1.SessionPolicy{}, nil
	}
	return p, err
}

// isSubagent says whether s is a sub-agent session, which gets no session tools.
func isSubagent(s *sessionsv1alpha1.AgentSession) bool {
	if s.Spec.SpawnedBy != "" {
		return true
	}
	k, err := sessionkey.Parse(s.Spec.Key)
	return err == nil && k.Subagent
}
