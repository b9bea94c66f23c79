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
	"path/filepath"
	"sort"
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
}

// Operator is the Dockerfile's final stage: /manager and /transcript-store as 65532.
var Operator = Spec{
	Files:      map[string]string{"/manager": "manager", "/transcript-store": "transcript-store"},
	User:       "65532:65532",
	Entrypoint: []string{"/manager"},
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
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
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
		h := &tar.Header{Name: p[1:], Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(body))}
		if err := add(h, body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
