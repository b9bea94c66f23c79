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
	"maps"
	"strconv"

	"go.opentelemetry.io/otel/trace"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/tracing"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// stamp marks an object a session tool is about to create: the turn's owner (so that
// cancelling it cancels what its turns started), the hop count and the chain, and with
// tracing on its own trace linked to this call.
func (c *toolCall) stamp(ctx context.Context, obj client.Object) error {
	chainLabels, marks, err := c.chainMarks(ctx, obj)
	if err != nil {
		return err
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[sessionsv1alpha1.StartedByLabel] = string(OwnerUIDOf(c.req.ID))
	maps.Copy(labels, chainLabels)
	obj.SetLabels(labels)
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	maps.Copy(a, marks)
	if tracing.Enabled() {
		// Its own trace from the start (no annotation write later), linked to this call.
		a[tracing.Annotation] = tracing.NewRoot()
		a[tracing.LinkAnnotation] = tracing.Format(trace.SpanContextFromContext(ctx))
	}
	obj.SetAnnotations(a)
	return nil
}

// chainMarks are the labels and annotations a session tool puts on the SessionSend or
// SubagentRun it creates: the hop count of the object that owns the calling turn plus one,
// and the chain it belongs to (the owner's, or the owner itself when it is a root). The
// webhook accepts them only from the manager and holds them to the SessionPolicy's
// maxHops, maxSendsPerChain and maxPairRepeats, so a chain of agents calling each other
// ends however the models answer.
func (c *toolCall) chainMarks(ctx context.Context, obj client.Object) (labels, annotations map[string]string, err error) {
	o, err := c.owner(ctx)
	if err != nil {
		return nil, nil, err
	}
	labels, annotations = policy.NextChain(o.labels, o.annotations, o.uid, c.req.Owner.Kind, c.req.Owner.Name)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[sessionsv1alpha1.HopsAnnotation] = strconv.Itoa(policy.NextHops(o.annotations))
	if in, err := policy.CarriedOf(o.annotations); err == nil && in != nil {
		// A chain that arrived through a door goes on here: its path and budget travel with
		// what this turn starts, so a loop that comes back through the wire is seen.
		left := in.Budget
		if g := c.e.opts.Budget; g != nil {
			left = usage.Narrow(left, g.Remaining(ctx, c.budgetCall(budget.PurposeTurn)))
		}
		next := policy.NextCarried(in, "", 0, c.from(), localTarget(obj), left, nil)
		annotations[sessionsv1alpha1.CarriedChainAnnotation] = next.Encode()
	}
	return labels, annotations, nil
}

// ownerMarks are the labels and annotations of the send or run that owns the calling turn,
// and its UID; all empty for a turn nobody owns.
type ownerMarks struct {
	labels, annotations map[string]string
	uid                 string
}

// owner reads the marks of the turn's owner. An owner deleted mid-turn starts a hop count
// again and is taken for a root; the namespace's rate still bounds how often.
func (c *toolCall) owner(ctx context.Context) (ownerMarks, error) {
	var owner client.Object
	switch c.req.Owner.Kind {
	case OwnerSessionSend:
		owner = &sessionsv1alpha1.SessionSend{}
	case OwnerSubagentRun:
		owner = &sessionsv1alpha1.SubagentRun{}
	default:
		return ownerMarks{}, nil
	}
	err := c.e.opts.Reader.Get(ctx, c.req.Owner.NamespacedName, owner)
	if err != nil && !apierrors.IsNotFound(err) {
		return ownerMarks{}, err
	}
	return ownerMarks{labels: owner.GetLabels(), annotations: owner.GetAnnotations(), uid: string(OwnerUIDOf(c.req.ID))}, nil
}

// localTarget names what obj, made by a session tool, asks in the pairs a carried chain
// holds: a send's target session; a spawn's own run (each spawn has a new child session).
func localTarget(obj client.Object) string {
	if s, ok := obj.(*sessionsv1alpha1.SessionSend); ok {
		return s.Namespace + "/" + s.Spec.SessionKey
	}
	return obj.GetNamespace() + "/spawn/" + obj.GetName()
}

// from names the caller in the pairs a carried chain holds: its agent, not its session, as
// each message through a door lands in a session of its own (a new A2A context), so a loop
// back to an agent comes back to another of its sessions.
func (c *toolCall) from() string { return c.req.Namespace + "/agent/" + c.session.Spec.AgentID }
