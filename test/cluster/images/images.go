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

// Package images builds the operator's container image offline, without a Docker engine or a
// registry, from binaries built on this machine: one layer on an empty image, written as a
// tarball that `ctr images import` loads. What goes in it mirrors the Dockerfile's final
// stage; images_test.go parses the Dockerfile so the two cannot drift apart.
package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Spec is what an image holds: binaries at paths, the user and the entrypoint.
type Spec struct {
	// Files maps a path in the image to the name of a binary in the build directory.
	Files      map[string]string
	User       string
	Entrypoint []string
	// Busybox, when set, is the path in the image of a static busybox among Files: every
	// applet it lists (busybox --list-full: bin/sh, usr/bin/id, ...) becomes a link to it,
	// which gives the image a shell and coreutils.
	Busybox string
	// Dirs are directories made in the image, owned by the image's user.
	Dirs []string
}

// Operator is the Dockerfile's final stage: /manager and /transcript-store as 65532.
var Operator = Spec{
	Files:      map[string]string{"/manager": "manager", "/transcript-store": "transcript-store"},
	User:       "65532:65532",
	Entrypoint: []string{"/manager"},
}

// Sandbox is the default image of an Agent's sandbox (the manager's --sandbox-image):
// agent-sandbox's sandboxd as the entrypoint, and Debian's static busybox for the shell and
// coreutils the sandbox tools' commands run with, as 65532. Dockerfile.sandbox builds the
// same image with a Docker engine; images_test.go holds the two together.
var Sandbox = Spec{
	Files:      map[string]string{"/usr/local/bin/sandboxd": "sandboxd", "/bin/busybox": "busybox"},
	User:       "65532:65532",
	Entrypoint: []string{"/usr/local/bin/sandboxd"},
	Busybox:    "/bin/busybox",
	Dirs:       []string{"/workspace"},
}

// SandboxController is agent-sandbox's controller, built from the module go.mod requires
// (hack/agent-sandbox.sh): its release image holds the one binary too.
var SandboxController = Spec{
	Files:      map[string]string{"/agent-sandbox-controller": "agent-sandbox-controller"},
	User:       "65532:65532",
	Entrypoint: []string{"/agent-sandbox-controller"},
}

// Pause is the Pod sandbox image containerd asks for, built from test/cluster/pause.
var Pause = Spec{
	Files:      map[string]string{"/pause": "pause"},
	User:       "65535:65535",
	Entrypoint: []string{"/pause"},
}

// epoch keeps the layer's bytes, and so its digest, the same for the same binaries.
var epoch = time.Unix(0, 0)

// WriteTarball builds spec from the binaries in binDir and writes it to out, tagged ref.
func WriteTarball(spec Spec, binDir, ref, out string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	layerTar, err := layerBytes(spec, binDir)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Created = v1.Time{Time: epoch}
	cf.Config.User = spec.User
	cf.Config.Entrypoint = spec.Entrypoint
	cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	return tarball.WriteToFile(out, tag, img)
}

// layerBytes is one tar layer: distroless's passwd, group and /tmp, then the binaries.
func layerBytes(spec Spec, binDir string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(h *tar.Header, body []byte) error {
		h.ModTime, h.Uname, h.Gname = epoch, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group := "root:x:0:\nnonroot:x:65532:\n"
	for _, e := range []struct {
		h    tar.Header
		body string
	}{
		{tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755}, ""},
		{tar.Header{Name: "etc/passwd", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(passwd))}, passwd},
		{tar.Header{Name: "etc/group", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(group))}, group},
		{tar.Header{Name: "home/", Typeflag: tar.TypeDir, Mode: 0o755}, ""},
		{tar.Header{Name: "home/nonroot/", Typeflag: tar.TypeDir, Mode: 0o700, Uid: 65532, Gid: 65532}, ""},
		{tar.Header{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777}, ""},
	} {
		if err := add(&e.h, []byte(e.body)); err != nil {
			return nil, err
		}
	}
	made := map[string]bool{"etc/": true, "home/": true, "tmp/": true}
	paths := make([]string, 0, len(spec.Files))
	for p := range spec.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		body, err := os.ReadFile(filepath.Join(binDir, spec.Files[p]))
		if err != nil {
			return nil, fmt.Errorf("image file %s: %w", p, err)
		}
		for _, d := range parents(p) {
			if !made[d] {
				made[d] = true
				if err := add(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}, nil); err != nil {
					return nil, err
				}
			}
		}
		h := &tar.Header{Name: p[1:], Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(body))}
		if err := add(h, body); err != nil {
			return nil, err
		}
	}
	for _, d := range spec.Dirs {
		h := &tar.Header{Name: d[1:] + "/", Typeflag: tar.TypeDir, Mode: 0o755, Uid: 65532, Gid: 65532}
		if err := add(h, nil); err != nil {
			return nil, err
		}
	}
	if spec.Busybox != "" {
		dirs, links, err := busyboxLinks(filepath.Join(binDir, spec.Files[spec.Busybox]))
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			if !made[d] {
				made[d] = true
				if err := add(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}, nil); err != nil {
					return nil, err
				}
			}
		}
		for _, l := range links {
			if _, taken := spec.Files["/"+l]; taken {
				continue
			}
			if err := add(&tar.Header{Name: l, Typeflag: tar.TypeSymlink, Linkname: spec.Busybox, Mode: 0o777}, nil); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// parents are the directories above p ("/usr/local/bin/x": usr/, usr/local/, usr/local/bin/),
// as tar names.
func parents(p string) []string {
	var out []string
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i := 1; i < len(parts); i++ {
		out = append(out, strings.Join(parts[:i], "/")+"/")
	}
	return out
}

// busyboxLinks are the applet paths a busybox binary lists (bin/sh, usr/bin/id, ...) and the
// directories they need, each sorted.
func busyboxLinks(busybox string) (dirs, links []string, err error) {
	out, err := exec.Command(busybox, "--list-full").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("%s --list-full: %w", busybox, err)
	}
	seen := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		l = strings.TrimPrefix(l, "/")
		if l == "" || strings.Contains(l, "..") {
			continue
		}
		for _, d := range parents("/" + l) {
			if !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
		links = append(links, l)
	}
	sort.Strings(dirs)
	sort.Strings(links)
	return dirs, links, nil
}
