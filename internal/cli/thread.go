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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
)

// threadBinding is the line history prints above a thread-bound sub-agent session's
// messages: the chat and thread its announces go to (those of later sends into it, and of
// the runs it spawns), and the run that bound it; "" for any other session. run is the
// session's controlling SubagentRun, nil when it has none.
func threadBinding(s *sessionsv1alpha1.AgentSession, run *sessionsv1alpha1.SubagentRun) string {
	dc := s.Spec.DeliveryContext
	if dc == nil || dc.ThreadID == "" || run == nil || !run.Spec.Thread {
		return ""
	}
	thread := "a thread its announce opens (not yet)"
	if a := run.Status.Announce; a != nil && a.Thread != nil {
		thread = fmt.Sprintf("thread %s", a.Thread.ID)
	}
	return fmt.Sprintf("# bound to %s chat %s, %s, by subagentrun/%s", dc.Channel, dc.To, thread, run.Name)
}

// threadBindingOf reads the session named key and its run, as the caller, for threadBinding;
// a session or run the caller cannot read shows no line (history is read through the history
// API, which needs no Kubernetes rights).
func threadBindingOf(ctx context.Context, cl client.Client, namespace, key string) string {
	s, err := lookup.SessionByKey(ctx, cl, namespace, key)
	if err != nil || s == nil {
		return ""
	}
	owner := metav1.GetControllerOf(s)
	if owner == nil || owner.Kind != "SubagentRun" {
		return ""
	}
	run := &sessionsv1alpha1.SubagentRun{}
	if err := cl.Get(ctx, types.NamespacedName{Namespace: namespace, Name: owner.Name}, run); err != nil || run.UID != owner.UID {
		return ""
	}
	return threadBinding(s, run)
}
