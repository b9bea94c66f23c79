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
	"context"
	"errors"
	"fmt"
	"path"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox/sandboxd"
)

// SandboxWorkspaces gives a sandboxed child session its sandbox (internal/sandbox.Sandboxes):
// claimed or resumed by the call, a client when it is ready now, nil while it starts.
type SandboxWorkspaces interface {
	Ready(ctx context.Context, agent *sessionsv1alpha1.Agent, session *sessionsv1alpha1.AgentSession) (*sandboxd.Client, error)
}

// SandboxAttachmentsPath is where a run's attachments land in its sandboxed child's
// workspace, relative to it: attachAs.mountPath when the spawn gave one, else
// .agents/attachments/<uuid> as in an unsandboxed child's workspace.
func SandboxAttachmentsPath(run *sessionsv1alpha1.SubagentRun) string {
	if a := run.Spec.AttachAs; a != nil && a.MountPath != "" {
		return path.Clean(a.MountPath)
	}
	return path.Join(".agents", "attachments", string(run.UID))
}

// MaterializeInSandbox writes the attachments and their manifest under rel in the
// sandbox's workspace through sandboxd (each write atomic, parents made), with the same
// receipts as MaterializeAttachments. Writing again gives the same files.
func MaterializeInSandbox(ctx context.Context, sb *sandboxd.Client, rel string, atts []sessionsv1alpha1.Attachment) ([]sessionsv1alpha1.AttachmentReceipt, error) {
	dir, err := sandbox.WorkspacePath(rel)
	if err != nil {
		return nil, fmt.Errorf("attachAs mountPath %q: %w", rel, err)
	}
	return materialize(atts, func(name string, data []byte) error {
		err := sb.Write(ctx, path.Join(dir, name), data)
		if se := (*sandboxd.Error)(nil); err != nil && !errors.As(err, &se) {
			return fmt.Errorf("%w: %w", errUnreachable, err)
		}
		return err
	})
}

// errUnreachable marks a write that did not reach sandboxd (a Pod restarting, a broken
// port-forward): the run tries again rather than failing.
var errUnreachable = errors.New("the sandbox did not answer")

// attachInSandbox writes the run's attachments into its sandboxed child's sandbox, claiming
// it (from the Agent's warm pool when one waits) if the child has none yet. While the
// sandbox starts it says not done: the child's status.sandbox changing wakes the run again.
// A sandbox that cannot start fails the run, as an attachment that cannot be written does.
func (r *SubagentRunReconciler) attachInSandbox(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SubagentRun]) (bool, error) {
	run, st, child := f.Obj, &f.Obj.Status, f.Session
	sb, err := r.Sandboxes.Ready(ctx, f.Agent, child)
	switch {
	case errors.Is(err, sandbox.ErrCannotStart):
		r.fail(f, fmt.Sprintf("attachments: %v", err))
		return false, nil
	case err != nil:
		return false, err
	case sb == nil:
		f.RequeueAfter(ownerflow.NotReadyRequeue)
		return false, nil
	}
	rel := SandboxAttachmentsPath(run)
	receipts, err := MaterializeInSandbox(ctx, sb, rel, run.Spec.Attachments)
	if errors.Is(err, errUnreachable) {
		return false, err
	} else if err != nil {
		r.fail(f, fmt.Sprintf("attachments: %v", err))
		return false, nil
	}
	st.Attachments, st.AttachmentsDir = receipts, path.Join(sandbox.Workspace, rel)
	return true, nil
}
