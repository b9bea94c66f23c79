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
	"bufio"
	"encoding/json"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// finalStage reads the Dockerfile's last stage: the files COPY puts in the image (path in the
// image -> source's base name, the binary), USER and ENTRYPOINT.
func finalStage(t *testing.T, dockerfile string) Spec {
	t.Helper()
	f, err := os.Open(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s Spec
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			s = Spec{Files: map[string]string{}}
		case "COPY":
			args := fields[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "--") {
				args = args[1:]
			}
			if len(args) < 2 {
				t.Fatalf("COPY without source and destination: %q", sc.Text())
			}
			dest := args[len(args)-1]
			for _, src := range args[:len(args)-1] {
				p := dest
				if strings.HasSuffix(dest, "/") {
					p = dest + path.Base(src)
				}
				s.Files[p] = path.Base(src)
			}
		case "USER":
			s.User = fields[1]
		case "ENTRYPOINT":
			raw := strings.TrimSpace(strings.TrimPrefix(sc.Text(), fields[0]))
			if err := json.Unmarshal([]byte(raw), &s.Entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT must be exec form: %q: %v", raw, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOperatorImageMatchesDockerfile(t *testing.T) {
	if diff := cmp.Diff(finalStage(t, "../../../Dockerfile"), Operator); diff != "" {
		t.Errorf("the cluster test's image differs from the Dockerfile's final stage (-Dockerfile +images.Operator):\n%s", diff)
	}
}

// The sandbox image built offline runs what Dockerfile.sandbox's final stage runs: sandboxd
// at the same path, as the same user.
func TestSandboxImageMatchesDockerfile(t *testing.T) {
	s := finalStage(t, "../../../Dockerfile.sandbox")
	if s.Files["/usr/local/bin/sandboxd"] != "sandboxd" || Sandbox.Files["/usr/local/bin/sandboxd"] != "sandboxd" {
		t.Errorf("sandboxd: Dockerfile.sandbox %v, images.Sandbox %v", s.Files, Sandbox.Files)
	}
	if diff := cmp.Diff([]string{s.User}, []string{Sandbox.User}); diff != "" {
		t.Errorf("user (-Dockerfile.sandbox +images.Sandbox):\n%s", diff)
	}
	if diff := cmp.Diff(s.Entrypoint, Sandbox.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-Dockerfile.sandbox +images.Sandbox):\n%s", diff)
	}
}

// Every FROM names an exact release or a digest, never a moving tag alone (scratch is no
// image at all).
func TestDockerfileImagesArePinned(t *testing.T) {
	var b []byte
	for _, f := range []string{"../../../Dockerfile", "../../../Dockerfile.sandbox"} {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, body...)
	}
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.ToUpper(fields[0]) != "FROM" || fields[1] == "scratch" {
			continue
		}
		ref := fields[1]
		_, tag, _ := strings.Cut(path.Base(strings.Split(ref, "@")[0]), ":")
		pinned := strings.Contains(ref, "@sha256:") || strings.Count(tag, ".") >= 2
		if !pinned {
			t.Errorf("FROM %s: pin it by digest or by an exact release (x.y.z) tag", ref)
		}
	}
}
