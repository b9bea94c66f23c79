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

package a2aserver

import (
	"context"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// ContextKey is the session of a new A2A context of an agent: agent:<agentId>:a2a:<contextId>.
func ContextKey(agentID, contextID string) string {
	return "agent:" + agentID + ":a2a:" + contextID
}

// contextSession is the session a message with contextID goes into, and the context id the
// task carries. No context id starts a new context with a new session. A context id that
// names an existing session of the agent (its key, its sessionId, or a context of it made
// before) is that session, for a caller allowed to act as it; any other is a new context's
// session, created as the caller.
func (h *agentHandler) contextSession(ctx context.Context, contextID string) (string, string, error) {
	if contextID == "" {
		contextID = a2a.NewContextID()
		return ContextKey(h.agent.Name, contextID), contextID, h.createSession(ctx, ContextKey(h.agent.Name, contextID))
	}
	l := lookup.New(h.call.Reader, h.call.APIReader)
	s, err := l.ResolveSession(ctx, h.call.Namespace, contextID, h.agent.Name)
	if err != nil {
		return "", "", err
	}
	if s == nil {
		key := ContextKey(h.agent.Name, contextID)
		if _, err := sessionkey.Parse(key); err != nil {
			return "", "", fmt.Errorf("%w: contextId %q makes no session key: %s", a2a.ErrInvalidParams, contextID, err.Error())
		}
		if s, err = l.SessionByKey(ctx, h.call.Namespace, key); err != nil {
			return "", "", err
		}
		if s == nil {
			return key, contextID, h.createSession(ctx, key)
		}
	}
	if s.Spec.AgentID != h.agent.Name {
		return "", "", fmt.Errorf("%w: contextId %q is a session of agent %q, not of %q", a2a.ErrInvalidParams, contextID, s.Spec.AgentID, h.agent.Name)
	}
	if err := h.call.Access(ctx, caller.ActAs, s.Name); err != nil {
		return "", "", refused(err)
	}
	return s.Spec.Key, contextID, nil
}

// createSession creates a new context's session as the caller: RBAC (create agentsessions)
// and admission judge it. One made meanwhile by someone else is not the caller's to use
// unless the caller may act as it.
func (h *agentHandler) createSession(ctx context.Context, key string) error {
	s := &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.call.Namespace, Name: sessionkey.ObjectName(key),
			Labels: map[string]string{LabelAgent: h.agent.Name}},
		// No channel or chat type: setting them is the relabelling rule's (verb set-send-policy).
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: h.agent.Name},
	}
	err := h.call.Client.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		err = h.call.Access(ctx, caller.ActAs, s.Name)
	}
	return refused(err)
}
