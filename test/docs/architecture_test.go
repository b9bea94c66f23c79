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

package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repoPath matches a code span that names a path in the repository: it starts with one of
// the tree's top-level directories (or is a root page: README.md, DEVELOPMENT.md,
// CONTRIBUTING.md) and has no placeholder or glob.
var repoPath = regexp.MustCompile("`((?:api|cmd|controllers|internal|webhook|test|docs|config|hack|dist)/[A-Za-z0-9_./-]*|(?:README|DEVELOPMENT|CONTRIBUTING)\\.md)`")

// namedPaths returns the repository paths the Markdown text names in code spans, in order.
func namedPaths(md string) []string {
	var paths []string
	for _, m := range repoPath.FindAllStringSubmatch(md, -1) {
		if p := strings.TrimSuffix(m[1], "/"); !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths
}

func TestNamedPaths(t *testing.T) {
	md := "See `controllers/steps.go`, `internal/runtime` and `internal/`; not `cmd/*`, `<ns>/x.jsonl` or `steps()`. Again `controllers/steps.go`."
	want := []string{"controllers/steps.go", "internal/runtime", "internal"}
	if diff := cmp.Diff(want, namedPaths(md)); diff != "" {
		t.Errorf("namedPaths (-want +got):\n%s", diff)
	}
}

// TestArchitecturePathsExist keeps docs/architecture.md, the page a newcomer reads first,
// true to the tree: every file or package it names exists.
func TestArchitecturePathsExist(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths := namedPaths(string(b))
	if len(paths) < 10 {
		t.Fatalf("docs/architecture.md names %d repository paths; it should say where to start reading", len(paths))
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
			t.Errorf("docs/architecture.md names %s, which does not exist: %v", p, err)
		}
	}
}
