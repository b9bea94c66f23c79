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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// AttachmentsDir is where a run's attachments land in its child's workspace:
// <root>/<namespace>/<sessionId>/.agents/attachments/<uuid>/.
func AttachmentsDir(root, namespace, sessionID, uuid string) string {
	return filepath.Join(turns.WorkspaceDir(root, namespace, sessionID), ".agents", "attachments", uuid)
}

// manifestEntry is one file of the attachments manifest.
type manifestEntry struct {
	Name     string `json:"name"`
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"`
	MimeType string `json:"mimeType,omitempty"`
}

// MaterializeAttachments writes the files and a manifest into dir, each file synced before
// the manifest names it, and returns the receipts. Writing again gives the same files and
// receipts, so a run reconciled after a restart does it safely.
func MaterializeAttachments(dir string, atts []sessionsv1alpha1.Attachment) ([]sessionsv1alpha1.AttachmentReceipt, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	return materialize(atts, func(name string, data []byte) error {
		return writeSynced(filepath.Join(dir, name), data)
	})
}

// materialize decodes the attachments, writes each with write under its plain name, then
// the manifest, and returns the receipts (the same wherever the files land).
func materialize(atts []sessionsv1alpha1.Attachment, write func(name string, data []byte) error) ([]sessionsv1alpha1.AttachmentReceipt, error) {
	receipts := make([]sessionsv1alpha1.AttachmentReceipt, 0, len(atts))
	manifest := make([]manifestEntry, 0, len(atts))
	for _, a := range atts {
		r, data, err := policy.AttachmentReceipt(a)
		if err != nil {
			return nil, fmt.Errorf("attachment %q: %w", a.Name, err)
		}
		if filepath.Base(a.Name) != a.Name || a.Name == "." || a.Name == ".." {
			return nil, fmt.Errorf("attachment %q: not a plain file name", a.Name)
		}
		if err := write(a.Name, data); err != nil {
			return nil, err
		}
		receipts = append(receipts, r)
		manifest = append(manifest, manifestEntry{Name: r.Name, Bytes: r.Bytes, SHA256: r.SHA256, MimeType: a.MimeType})
	}
	b, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return nil, err
	}
	return receipts, write(policy.AttachmentManifestName, b)
}

// writeSynced writes a file through a temporary name, synced, then renamed into place.
func writeSynced(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
