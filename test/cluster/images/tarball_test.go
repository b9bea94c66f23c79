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

package images

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The tarball loads back as the image the Dockerfile describes: platform, user, entrypoint,
// and the binaries at their paths, executable.
func TestWriteTarball(t *testing.T) {
	bin := t.TempDir()
	for _, b := range []string{"manager", "transcript-store"} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!"+b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "img.tar")
	if err := WriteTarball(Operator, bin, "localhost/agent-session-operator:v1", out); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("localhost/agent-session-operator:v1")
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cf.OS, cf.Architecture, cf.Config.User}
	if diff := cmp.Diff([]string{"linux", "amd64", "65532:65532"}, got); diff != "" {
		t.Errorf("platform and user (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/manager"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	files := map[string]string{}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg && h.Mode&0o111 != 0 {
			b, _ := io.ReadAll(tr)
			files["/"+h.Name] = string(b)
		}
	}
	want := map[string]string{"/manager": "#!manager", "/transcript-store": "#!transcript-store"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("executables in the image (-want +got):\n%s", diff)
	}
}
