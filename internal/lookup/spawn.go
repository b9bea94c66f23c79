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

	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// GatherSpawn reads what a spawn's admission and its controller both need
// (policy.SpawnFacts): the requester spec.requesterSessionKey names and its Agent (or the
// Agent the key names, when no session has it), and the agent the child runs under
// (policy.TargetAgentID, the one rule for it) with its Agent.
func (l Lookup) GatherSpawn(ctx context.Context, namespace string, spec *sessionsv1alpha1.SubagentRunSpec) (policy.SpawnFacts, error) {
	f := policy.SpawnFacts{Namespace: namespace, From: spec.RequesterSessionKey}
	var err error
	if f.From != "" {
		if f.Requester, err = l.SessionByKey(ctx, namespace, f.From); err != nil {
			return f, err
		}
		agentID := sessionkey.AgentOf(f.From)
		if f.Requester != nil {
			agentID = f.Requester.Spec.AgentID
		}
		if f.RequesterAgent, err = l.agent(ctx, namespace, agentID); err != nil {
			return f, err
		}
	}
	f.TargetID = policy.TargetAgentID(spec, f.Requester)
	f.Target, err = l.agent(ctx, namespace, f.TargetID)
	return f, err
}

// ActiveChildren counts the runs of requester (a session key) that have not finished, from
// the cache's index of runs by requester.
func (l Lookup) ActiveChildren(ctx context.Context, namespace, requester string) (int, error) {
	var runs sessionsv1alpha1.SubagentRunList
	if err := l.Cache.List(ctx, &runs, client.InNamespace(namespace), client.MatchingFields{cacheindex.RunRequester: requester}); err != nil {
		return 0, err
	}
	n := 0
	for _, run := range runs.Items {
		if !sessionsv1alpha1.Finished(run.Status.Conditions) {
			n++
		}
	}
	return n, nil
}
