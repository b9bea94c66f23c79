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

package events

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// ObjectChange is one informer notification about an AgentSession, SessionSend,
// SubagentRun or ToolApproval: old is nil for an add, cur nil for a delete.
type ObjectChange struct{ Old, Cur client.Object }

// Classify maps an informer notification to the event it publishes: its kind, phase, the
// session it belongs to (key and object name, which the subscriber's access is judged by),
// and false when it publishes nothing. A session's phase is archived on the transition to
// Archived; a send belongs to its target session, a run to its requester.
func Classify(c ObjectChange) (kind, phase, key, name string, ok bool) {
	obj := c.Cur
	switch {
	case c.Old == nil:
		phase = PhaseCreated
	case c.Cur == nil:
		obj, phase = c.Old, "deleted"
	default:
		phase = PhaseUpdated
	}
	switch o := obj.(type) {
	case *sessionsv1alpha1.AgentSession:
		if phase == PhaseUpdated && o.Status.Phase == sessionsv1alpha1.SessionArchived {
			if old, _ := c.Old.(*sessionsv1alpha1.AgentSession); old != nil && old.Status.Phase != sessionsv1alpha1.SessionArchived {
				phase = PhaseArchived
			}
		}
		if phase == "deleted" {
			phase = PhaseArchived
		}
		return KindSessionsChanged, phase, o.Spec.Key, o.Name, true
	case *sessionsv1alpha1.SessionSend:
		key = o.TargetRef()
		return KindSendsChanged, phase, key, sessionkey.ObjectName(key), true
	case *sessionsv1alpha1.SubagentRun:
		key = o.Spec.RequesterSessionKey
		if key == "" {
			key = o.Status.ChildSessionKey
		}
		return KindRunsChanged, phase, key, sessionkey.ObjectName(key), key != ""
	case *sessionsv1alpha1.ToolApproval:
		phase, ok = approvalPhase(c, o)
		return KindApprovalsChanged, phase, o.Spec.SessionKey, sessionkey.ObjectName(o.Spec.SessionKey), ok
	}
	return "", "", "", "", false
}

// approvalPhase is requested while the approval waits (its Pending status landed, no
// decision yet), decided or expired once it ended. A watch that keeps nothing hands the
// same object as old and new: the phase then comes from the object alone; with a distinct
// old object, a change that leaves the phase as it was publishes nothing.
func approvalPhase(c ObjectChange, cur *sessionsv1alpha1.ToolApproval) (string, bool) {
	if c.Cur == nil {
		return "", false
	}
	if old, _ := c.Old.(*sessionsv1alpha1.ToolApproval); old != nil && old != cur && old.Status.Phase == cur.Status.Phase {
		return "", false
	}
	switch {
	case cur.Status.Phase == sessionsv1alpha1.ApprovalPending && cur.Spec.Decision == "":
		return "requested", true
	case cur.Status.Phase == sessionsv1alpha1.ApprovalExpired:
		return "expired", true
	case cur.Status.Decided():
		return "decided", true
	}
	return "", false
}

// PublishChange publishes one informer notification, with the object (managed fields
// left out) as its summary.
func (h *Hub) PublishChange(c ObjectChange) {
	kind, phase, key, name, ok := Classify(c)
	if !ok {
		return
	}
	obj := c.Cur
	if obj == nil {
		obj = c.Old
	}
	obj = obj.DeepCopyObject().(client.Object)
	obj.SetManagedFields(nil)
	data, err := json.Marshal(obj)
	if err != nil {
		return
	}
	h.PublishObject(kind, phase, obj.GetNamespace(), key, name, data)
}

// Watch feeds the hub from the cache's session informer, and from watches of runs and tool
// approvals (w) that keep nothing: the transcript-store caches no runs, whose finished ones
// would outgrow its memory. Sends are not watched: the manager, which watches them anyway,
// hands their changes to the store over its internal API. sel, when set, selects the
// objects watched (a shard's own). It returns once the session handler is registered (the
// cache must be started by the caller); the run and approval watches go on until ctx is
// done.
func (h *Hub) Watch(ctx context.Context, c cache.Cache, w client.WithWatch, sel labels.Selector) error {
	inf, err := c.GetInformer(ctx, &sessionsv1alpha1.AgentSession{})
	if err != nil {
		return err
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if cur, ok := asObject(o); ok {
				h.PublishChange(ObjectChange{Cur: cur})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := asObject(oldObj)
			cur, ok2 := asObject(newObj)
			if ok1 && ok2 && old.GetResourceVersion() != cur.GetResourceVersion() {
				h.PublishChange(ObjectChange{Old: old, Cur: cur})
			}
		},
		DeleteFunc: func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if old, ok := asObject(o); ok {
				h.PublishChange(ObjectChange{Old: old})
			}
		},
	}); err != nil {
		return err
	}
	go follow(ctx, w, func() client.ObjectList { return &sessionsv1alpha1.SubagentRunList{} }, sel, h.PublishChange)
	go follow(ctx, w, func() client.ObjectList { return &sessionsv1alpha1.ToolApprovalList{} }, sel, h.PublishChange)
	return nil
}

func asObject(o any) (client.Object, bool) {
	obj, ok := o.(client.Object)
	return obj, ok
}
