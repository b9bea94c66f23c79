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

package a2aserver

import (
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
)

// deltaOf is the reply piece an event carries when it is a session.delta of namespace.
func deltaOf(e events.Event, namespace string) (events.SessionDelta, bool) {
	var d events.SessionDelta
	if e.Kind != events.KindSessionDelta || e.Namespace != namespace || json.Unmarshal(e.Data, &d) != nil {
		return d, false
	}
	return d, true
}

// liveReply turns the pieces of a task's reply, as the model writes it, into artifact
// updates of the reply artifact: the first piece of a model call starts it over, the next
// ones append. The completed task's artifact replaces it whole, so a dropped piece or the
// text before a tool call is not left behind.
type liveReply struct {
	send    *sessionsv1alpha1.SessionSend // the task's send
	step    int
	started bool
}

// update is the artifact update of d, or nil when d is not of this task's run.
func (r *liveReply) update(d events.SessionDelta) *a2a.TaskArtifactUpdateEvent {
	if r.send == nil {
		return nil
	}
	if d.RunID != string(taskID(r.send)) { // the task id is its run's id
		return nil
	}
	appendTo := r.started && d.Step == r.step
	r.started, r.step = true, d.Step
	return &a2a.TaskArtifactUpdateEvent{
		TaskID: taskID(r.send), ContextID: contextOf(r.send),
		Artifact: replyArtifact(d.Text), Append: appendTo,
	}
}
