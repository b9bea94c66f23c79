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

package ownerflow

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/tracing"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// ensureTrace gives an object its trace when tracing is on and it has none yet (made with
// kubectl; tool-made objects carry one from their create): one annotation write, only with
// tracing on, so the trace survives a restart. The trace comes from the object's UID: a
// reconcile that reads the object from a cache not yet showing the write writes the same
// value again, where a new random root would move the object's later turns to another trace.
func (r *StepRunner[T]) ensureTrace(ctx context.Context, obj T) error {
	if !tracing.Enabled() || obj.GetAnnotations()[tracing.Annotation] != "" {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		tracing.Annotation: tracing.RootOf(string(obj.GetUID()))}}})
	return r.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}

// endTrace exports the object's root span when it finishes: from its creation to now, with
// the ids its annotation chose and a link to the tool call that created it.
func (r *StepRunner[T]) endTrace(obj T) {
	a := obj.GetAnnotations()
	if a[tracing.Annotation] == "" {
		return
	}
	name := "sessions_spawn"
	if r.ownerKind == turns.OwnerSessionSend {
		name = "sessions_send"
	}
	phase := r.of.Phase(obj)
	root := tracing.Root{TraceParent: a[tracing.Annotation], Link: a[tracing.LinkAnnotation], Parent: a[tracing.ParentAnnotation], Name: name,
		Start: obj.GetCreationTimestamp().Time, End: r.clock.Now(),
		Attributes: []attribute.KeyValue{attribute.String("k8s.namespace.name", obj.GetNamespace()),
			attribute.String("agent_sessions.object.name", obj.GetName()), attribute.String("agent_sessions.phase", phase)}}
	if phase != "Completed" && phase != "Succeeded" && phase != "Cancelled" {
		root.Err = phase
	}
	tracing.EndRoot(root)
}
