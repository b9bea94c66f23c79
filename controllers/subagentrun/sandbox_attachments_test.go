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
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// A sandboxed child's attachments land in its sandbox's workspace (a real sandboxd) at
// attachAs.mountPath, or .agents/attachments/<uuid> without one, with the receipts an
// unsandboxed child's get; a mountPath that leaves the workspace is refused.
func TestMaterializeInSandbox(t *testing.T) {
	root := t.TempDir()
	sb := testenv.StartSandboxd(t, root)
	atts := []sessionsv1alpha1.Attachment{
		{Name: "a.txt", Content: "hello", Encoding: "utf8"},
		{Name: "b.bin", Content: base64.StdEncoding.EncodeToString([]byte{0, 1, 2}), Encoding: "base64"},
	}
	local, err := MaterializeAttachments(t.TempDir(), atts)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		attachAs *sessionsv1alpha1.AttachAs
		wantDir  string
	}{
		"at mountPath":    {attachAs: &sessionsv1alpha1.AttachAs{MountPath: "inputs/data/"}, wantDir: "inputs/data"},
		"no attachAs":     {wantDir: ".agents/attachments/u1"},
		"empty mountPath": {attachAs: &sessionsv1alpha1.AttachAs{}, wantDir: ".agents/attachments/u1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			run := &sessionsv1alpha1.SubagentRun{Spec: sessionsv1alpha1.SubagentRunSpec{AttachAs: tc.attachAs}}
			run.UID = "u1"
			rel := SandboxAttachmentsPath(run)
			if rel != tc.wantDir {
				t.Fatalf("SandboxAttachmentsPath = %q, want %q", rel, tc.wantDir)
			}
			receipts, err := MaterializeInSandbox(context.Background(), sb, rel, atts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(local, receipts); diff != "" {
				t.Errorf("receipts differ from an unsandboxed child's (-local +sandbox):\n%s", diff)
			}
			if b, err := os.ReadFile(filepath.Join(root, rel, "a.txt")); err != nil || string(b) != "hello" {
				t.Errorf("a.txt in the sandbox = %q, %v", b, err)
			}
			var manifest []manifestEntry
			b, err := os.ReadFile(filepath.Join(root, rel, policy.AttachmentManifestName))
			if err != nil || json.Unmarshal(b, &manifest) != nil || len(manifest) != 2 || manifest[1].SHA256 != local[1].SHA256 {
				t.Errorf("manifest = %s, %v", b, err)
			}
		})
	}
	if _, err := MaterializeInSandbox(context.Background(), sb, "../out", atts); err == nil {
		t.Error("a mountPath out of the workspace was written")
	}
}
