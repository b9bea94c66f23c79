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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestMaterializeAttachments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "att")
	atts := []sessionsv1alpha1.Attachment{{Name: "a.txt", Content: "hello"}, {Name: "b.bin", Content: "AAEC", Encoding: sessionsv1alpha1.EncodingBase64, MimeType: "application/octet-stream"}}
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	want := []sessionsv1alpha1.AttachmentReceipt{{Name: "a.txt", Bytes: 5, SHA256: sum([]byte("hello"))}, {Name: "b.bin", Bytes: 3, SHA256: sum([]byte{0, 1, 2})}}
	for range 2 { // a second run (a reconcile after a restart) gives the same files and receipts
		got, err := MaterializeAttachments(dir, atts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("receipts (-want +got):\n%s", diff)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "b.bin"))
	if err != nil || string(data) != "\x00\x01\x02" {
		t.Errorf("b.bin = %q, %v", data, err)
	}
	var manifest []map[string]any
	raw, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err := json.Unmarshal(raw, &manifest); err != nil || len(manifest) != 2 || manifest[1]["mimeType"] != "application/octet-stream" {
		t.Errorf("manifest = %s (%v)", raw, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left a temporary file %s", e.Name())
		}
	}
	if _, err := MaterializeAttachments(dir, []sessionsv1alpha1.Attachment{{Name: "../escape", Content: "x"}}); err == nil {
		t.Error("a name with a path was written")
	}
}
