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

package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

func newPolicyCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "Explain the session policy"}
	cmd.AddCommand(&cobra.Command{
		Use:   "explain FROM TO",
		Short: "Say whether FROM may send to TO, which rule decides, and where TO's announces go",
		Long: `Say whether FROM may send to TO, and which rule decides, by the same rules the
admission webhook applies; then where TO's announces go (the sink, the chat id, the thread). It exits 0 when it printed a decision, allowed or denied,
and 1 when it could not decide (an unknown session, an API error).`,
		Example: `  # may the main agent's main session send into the Discord group?
  kubectl sessions policy explain agent:main:main agent:main:discord:group:general

  # a person's send (no requester): only the send policy applies
  kubectl sessions policy explain - agent:research:main`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return o.explain(cmd.Context(), args[0], args[1]) },
	})
	return cmd
}

// explain runs the same internal/policy functions the webhook runs, on the same inputs.
func (o *options) explain(ctx context.Context, from, to string) error {
	cl, ns, err := o.clientIn()
	if err != nil {
		return err
	}
	target, err := findSession(ctx, cl, ns, to)
	if err != nil {
		return err
	}
	pol := &sessionsv1alpha1.SessionPolicy{}
	if err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: "default"}, pol); apierrors.IsNotFound(err) {
		pol = nil
	} else if err != nil {
		return err
	}
	out := o.streams.Out
	if from != "-" {
		requester, err := findSession(ctx, cl, ns, from)
		if err != nil {
			return err
		}
		agent := &sessionsv1alpha1.Agent{}
		if err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: requester.Spec.AgentID}, agent); err != nil {
			agent = nil
		}
		var spec *sessionsv1alpha1.SessionPolicySpec
		a2a := sessionsv1alpha1.AgentToAgentSpec{}
		if pol != nil {
			spec, a2a = &pol.Spec, pol.Spec.AgentToAgent
		}
		level := policy.EffectiveVisibility(spec, requester, agent)
		parentOf := func(key string) (string, bool) {
			s, err := findSession(ctx, cl, ns, key)
			if err != nil {
				return "", false
			}
			return s.Spec.SpawnedBy, true
		}
		ok, why := policy.Visible(level, a2a, requester, target, parentOf)
		fmt.Fprintf(out, "visibility: %s (level %s)\n", verdict(ok), level)
		if !ok {
			fmt.Fprintf(out, "  %s\n", why)
			return nil
		}
	}
	var sp *sessionsv1alpha1.SendPolicySpec
	if pol != nil {
		sp = &pol.Spec.SendPolicy
	}
	d := policy.DecideSend(sp, policy.TargetOf(target))
	fmt.Fprintf(out, "send policy: %s\n  %s\n", verdict(d.Allowed), d.Reason)
	printRoute(out, policy.RouteOf(pol, target))
	return nil
}

// findSession finds a session by key (through the operator's object name) or sessionId.
func findSession(ctx context.Context, cl client.Client, ns, ref string) (*sessionsv1alpha1.AgentSession, error) {
	var all sessionsv1alpha1.AgentSessionList
	if err := cl.List(ctx, &all, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range all.Items {
		if s := &all.Items[i]; s.Spec.Key == ref || s.Status.SessionID == ref {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no session %q in namespace %s", ref, ns)
}

func verdict(ok bool) string {
	if ok {
		return "allowed"
	}
	return "denied"
}
