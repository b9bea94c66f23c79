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

// Package approval is what the turn engine asks about a tool call that may need a person:
// the verdict of the namespace's and the Agent's rules, the call's ToolApproval, and the
// request for one. cmd/manager builds one Desk and gives it to the engine at construction;
// the engine never reads or writes ToolApprovals on its own. A ToolApproval's status is
// written by the ToolApproval controller only (decisions come through spec.decision, judged
// by the webhook).
package approval

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// Asker is what the turn engine asks. *Desk implements it.
type Asker interface {
	// Verdict says whether a call of tool by agent in namespace ns waits for a person, and
	// how long at most.
	Verdict(ctx context.Context, ns string, agent *sessionsv1alpha1.Agent, tool string) (policy.ApprovalVerdict, error)
	// Find is the ToolApproval named name, nil when there is none.
	Find(ctx context.Context, ns, name string) (*sessionsv1alpha1.ToolApproval, error)
	// Ask creates ta (undecided); one of its name made already (a repeated turn) is returned
	// instead.
	Ask(ctx context.Context, ta *sessionsv1alpha1.ToolApproval) (*sessionsv1alpha1.ToolApproval, error)
}

// Desk answers the engine from the manager's cache (the API server when the cache has not
// seen an object yet) and creates ToolApprovals with the manager's client.
type Desk struct {
	cache, api client.Reader
	client     client.Client
}

var _ Asker = (*Desk)(nil)

// NewDesk returns a Desk that reads with cache, confirms a miss with api (nil: cache) and
// creates with c.
func NewDesk(cache, api client.Reader, c client.Client) *Desk {
	if api == nil {
		api = cache
	}
	return &Desk{cache: cache, api: api, client: c}
}

// Verdict implements Asker.
func (d *Desk) Verdict(ctx context.Context, ns string, agent *sessionsv1alpha1.Agent, tool string) (policy.ApprovalVerdict, error) {
	p, err := lookup.New(d.cache, d.api).SessionPolicy(ctx, ns)
	if err != nil {
		return policy.ApprovalVerdict{}, err
	}
	var admin *sessionsv1alpha1.ApprovalPolicy
	if p != nil {
		admin = p.Spec.ToolApproval
	}
	if admin == nil && agent.Spec.Tools.Approval == nil {
		return policy.ApprovalVerdict{}, nil
	}
	return policy.ApprovalFor(admin, agent.Spec.Tools.Approval, tool), nil
}

// Find implements Asker.
func (d *Desk) Find(ctx context.Context, ns, name string) (*sessionsv1alpha1.ToolApproval, error) {
	key := types.NamespacedName{Namespace: ns, Name: name}
	ta := &sessionsv1alpha1.ToolApproval{}
	err := d.cache.Get(ctx, key, ta)
	if apierrors.IsNotFound(err) {
		err = d.api.Get(ctx, key, ta)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return ta, err
}

// Ask implements Asker.
func (d *Desk) Ask(ctx context.Context, ta *sessionsv1alpha1.ToolApproval) (*sessionsv1alpha1.ToolApproval, error) {
	err := d.client.Create(ctx, ta)
	if apierrors.IsAlreadyExists(err) {
		return d.Find(ctx, ta.Namespace, ta.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("creating ToolApproval for %s: %w", ta.Spec.Tool, err)
	}
	return ta, nil
}
