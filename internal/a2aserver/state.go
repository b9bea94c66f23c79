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
	"github.com/a2aproject/a2a-go/v2/a2a"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// TaskState is the A2A state of a send: a send not yet finished is working (accepted,
// running, and the reply-back and announce steps of an agent's send, which an A2A caller's
// person-made send never has), AwaitingApproval (a tool call waits for a person's
// ToolApproval) is input-required, Completed is completed, Failed is failed and Cancelled is
// canceled. A send that timed out keeps working: its run
// goes on and its reply still lands.
func TaskState(st *sessionsv1alpha1.SessionSendStatus) a2a.TaskState {
	switch st.Phase {
	case sessionsv1alpha1.SendCompleted:
		return a2a.TaskStateCompleted
	case sessionsv1alpha1.SendFailed:
		return a2a.TaskStateFailed
	case sessionsv1alpha1.SendCancelled:
		return a2a.TaskStateCanceled
	case sessionsv1alpha1.SendAwaitingApproval:
		return a2a.TaskStateInputRequired
	case "":
		if st.Status == "" {
			return a2a.TaskStateSubmitted
		}
	}
	return a2a.TaskStateWorking
}

// terminal says the state is one a task does not leave.
func terminal(s a2a.TaskState) bool { return s.Terminal() }

// replyArtifactID names the one artifact of a task: the reply.
const replyArtifactID a2a.ArtifactID = "reply"

// Task is the A2A task of a send: its state, the failure as the status message, and the
// reply as the artifact once it completed.
func Task(send *sessionsv1alpha1.SessionSend, id a2a.TaskID, contextID string) *a2a.Task {
	st := &send.Status
	t := &a2a.Task{ID: id, ContextID: contextID, Status: a2a.TaskStatus{State: TaskState(st)}}
	if ts := send.Status.CompletedAt; ts != nil {
		at := ts.Time
		t.Status.Timestamp = &at
	}
	switch t.Status.State {
	case a2a.TaskStateCompleted:
		t.Artifacts = []*a2a.Artifact{replyArtifact(st.Reply)}
	case a2a.TaskStateFailed, a2a.TaskStateCanceled:
		if st.Error != "" {
			t.Status.Message = a2a.NewMessageForTask(a2a.MessageRoleAgent, t, a2a.NewTextPart(st.Error))
		}
	}
	return t
}

func replyArtifact(text string) *a2a.Artifact {
	return &a2a.Artifact{ID: replyArtifactID, Name: "reply", Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
}
