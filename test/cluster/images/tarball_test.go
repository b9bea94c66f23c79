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
	"strings"
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

// The sandbox image: sandboxd as its entrypoint, busybox with its applets linked to it (a
// shell, id, hostname, ...), a workspace the non-root user owns.
func TestSandboxTarball(t *testing.T) {
	const busybox = "/bin/busybox"
	if _, err := os.Stat(busybox); err != nil {
		t.Skip("no busybox on this machine (hack/cluster-packages.sh installs busybox-static)")
	}
	bin := t.TempDir()
	body, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	for b, content := range map[string][]byte{"sandboxd": []byte("#!sandboxd"), "busybox": body} {
		if err := os.WriteFile(filepath.Join(bin, b), content, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "img.tar")
	if err := WriteTarball(Sandbox, bin, "localhost/sandbox:v1", out); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/usr/local/bin/sandboxd"}, cf.Config.Entrypoint); diff != "" || cf.Config.User != "65532:65532" {
		t.Errorf("entrypoint (-want +got):\n%s\nuser %q", diff, cf.Config.User)
	}
	links, dirs := map[string]string{}, map[string]int{}
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
		switch h.Typeflag {
		case tar.TypeSymlink:
			links["/"+h.Name] = h.Linkname
		case tar.TypeDir:
			dirs["/"+strings.TrimSuffix(h.Name, "/")]++
		}
	}
	for _, applet := range []string{"/bin/sh", "/bin/ls", "/bin/cat", "/usr/bin/id", "/bin/hostname"} {
		if links[applet] != "/bin/busybox" {
			t.Errorf("%s -> %q, want /bin/busybox", applet, links[applet])
		}
	}
	for d, n := range dirs {
		if n > 1 {
			t.Errorf("directory %s appears %d times", d, n)
		}
	}
	if dirs["/workspace"] != 1 || dirs["/usr/local/bin"] != 1 {
		t.Errorf("directories: %v", dirs)
	}
}
