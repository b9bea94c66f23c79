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
	"encoding/json"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// The doors people decide tool calls through (kubectl, /mcp, the console) share these: the
// list of pending approvals and the decision, written as the caller so RBAC (the verb
// approve) and the webhook judge it. No tool of an agent reaches them.

// PendingApprovals are the namespace's ToolApprovals that wait for a decision, oldest
// first; namespace "" lists every namespace the reader sees.
func PendingApprovals(ctx context.Context, r client.Reader, namespace string) ([]sessionsv1alpha1.ToolApproval, error) {
	var list sessionsv1alpha1.ToolApprovalList
	if err := r.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	pending := slices.DeleteFunc(list.Items, func(ta sessionsv1alpha1.ToolApproval) bool {
		return ta.Status.Decided() || ta.Spec.Decision != ""
	})
	slices.SortStableFunc(pending, func(a, b sessionsv1alpha1.ToolApproval) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return pending, nil
}

// Decide sets a ToolApproval's decision and reason as whoever c acts for. A denial needs a
// reason: the model is told it.
func Decide(ctx context.Context, c client.Client, namespace, name string, d sessionsv1alpha1.ApprovalDecision, reason string) error {
	switch {
	case d != sessionsv1alpha1.DecisionApproved && d != sessionsv1alpha1.DecisionDenied:
		return errors.New("decision must be Approved or Denied")
	case d == sessionsv1alpha1.DecisionDenied && reason == "":
		return errors.New("a denial needs a reason: the agent is told it")
	}
	spec := map[string]any{"decision": d}
	if reason != "" {
		spec["reason"] = reason
	}
	body, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	ta := &sessionsv1alpha1.ToolApproval{}
	ta.Namespace, ta.Name = namespace, name
	return c.Patch(ctx, ta, client.RawPatch(types.MergePatchType, body))
}
