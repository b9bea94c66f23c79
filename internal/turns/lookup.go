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

package turns

import (
	"context"
	"fmt"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// The engine finds sessions, agents and the policy through internal/lookup, as the
// controllers and the webhook do: the cache first, a miss confirmed with the API server.

func (e *Engine) lookup() lookup.Lookup { return lookup.New(e.opts.Reader, e.opts.APIReader) }

// sessionByKey is the session with key; a missing one is an error for a turn.
func (e *Engine) sessionByKey(ctx context.Context, namespace, key string) (*v1.AgentSession, error) {
	s, err := e.lookup().SessionByKey(ctx, namespace, key)
	if err == nil && s == nil {
		err = fmt.Errorf("session %q not found", key)
	}
	return s, err
}

// agent reads an Agent (its name is the agent id).
func (e *Engine) agent(ctx context.Context, namespace, id string) (*v1.Agent, error) {
	a, err := e.lookup().Agent(ctx, namespace, id)
	if err == nil && a == nil {
		err = fmt.Errorf("agent %q not found", id)
	}
	return a, err
}

// isSubagent says whether s is a sub-agent session, which gets no session tools.
func isSubagent(s *v1.AgentSession) bool {
	if s.Spec.SpawnedBy != "" {
		return true
	}
	k, err := sessionkey.Parse(s.Spec.Key)
	return err == nil && k.Subagent
}
