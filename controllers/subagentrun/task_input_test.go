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

package subagentrun

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// An unsandboxed child's task message shows attachAs as recorded only; a sandboxed child's
// names the sandbox path where the files are.
func TestTaskInputShowsAttachAs(t *testing.T) {
	run := &sessionsv1alpha1.SubagentRun{Spec: sessionsv1alpha1.SubagentRunSpec{Task: "look", AttachAs: &sessionsv1alpha1.AttachAs{MountPath: "inputs/data"}}}
	run.Status.AttachmentsDir = "/w/ns/sid/.agents/attachments/u1"
	run.Status.Attachments = []sessionsv1alpha1.AttachmentReceipt{{Name: "a.txt"}}
	want := "look\n\nAttachments (1 files, manifest manifest.json): /w/ns/sid/.agents/attachments/u1\n" +
		"attachAs mountPath inputs/data (recorded only: this session has no sandbox, so nothing is placed there)"
	if diff := cmp.Diff(want, taskInput(run, false)); diff != "" {
		t.Errorf("task input (-want +got):\n%s", diff)
	}
	run.Status.AttachmentsDir = "/workspace/inputs/data"
	want = "look\n\nAttachments (1 files, manifest manifest.json): /workspace/inputs/data"
	if diff := cmp.Diff(want, taskInput(run, true)); diff != "" {
		t.Errorf("sandboxed task input (-want +got):\n%s", diff)
	}
	if got := taskInput(&sessionsv1alpha1.SubagentRun{Spec: sessionsv1alpha1.SubagentRunSpec{Task: "look"}}, false); got != "look" {
		t.Errorf("task input without attachments = %q", got)
	}
}
