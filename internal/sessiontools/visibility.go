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

package sessiontools

import (
	"context"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// sees applies internal/policy's visibility rule (the one the webhook applies) to a session
// tool's target: the level from the namespace's SessionPolicy, clamped for sandboxed
// sessions, and the spawn tree walked through the reader. A person (no calling session)
// sees what its RBAC lets it read: the reader already runs as that person.
func (c *Call) sees(ctx context.Context, pol *sessionsv1alpha1.SessionPolicy, target *sessionsv1alpha1.AgentSession) (bool, string) {
	if c.Session == nil {
		return true, ""
	}
	level := policy.EffectiveVisibility(&pol.Spec, c.Session, c.Agent)
	parentOf := func(key string) (string, bool) {
		s, err := c.sessionByKey(ctx, key)
		if err != nil {
			return "", false
		}
		return s.Spec.SpawnedBy, true
	}
	return policy.Visible(level, pol.Spec.AgentToAgent, c.Session, target, parentOf)
}

// visibility is sees as a filter over the namespace's sessions, nil when the caller is a
// person (no calling session): a person sees what RBAC lets it list, only a session's view
// is narrowed by the SessionPolicy, so only then is the policy read.
func (c *Call) visibility(ctx context.Context) (func(*sessionsv1alpha1.AgentSession) bool, error) {
	if c.Session == nil {
		return nil, nil
	}
	pol, err := c.sessionPolicy(ctx)
	if err != nil {
		return nil, err
	}
	return func(s *sessionsv1alpha1.AgentSession) bool {
		ok, _ := c.sees(ctx, pol, s)
		return ok
	}, nil
}
