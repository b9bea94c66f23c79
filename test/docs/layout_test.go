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
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// layoutPaths returns the paths the "## Layout" section of DEVELOPMENT.md names: the first field of
// each line of its fenced block, without a trailing slash; blank lines and # comments
// are skipped.
func layoutPaths(readme string) []string {
	var paths []string
	inSection, inBlock := false, false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			inSection = line == "## Layout"
			inBlock = false
		case !inSection:
		case strings.HasPrefix(line, "```"):
			inBlock = !inBlock
		case inBlock:
			f := strings.Fields(line)
			if len(f) > 0 && !strings.HasPrefix(f[0], "#") {
				paths = append(paths, strings.TrimSuffix(f[0], "/"))
			}
		}
	}
	return paths
}

// goPackageDirs returns every directory under root that holds a .go file, relative to
// root with forward slashes, skipping what the go command skips (testdata, and names
// starting with . or _) and git-ignored build output.
func goPackageDirs(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "bin" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(dirs, rel) {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	return dirs, err
}

// unnamed returns the dirs that names leaves out, sorted.
func unnamed(dirs, names []string) []string {
	var out []string
	for _, d := range dirs {
		if !slices.Contains(names, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

func TestLayoutPaths(t *testing.T) {
	readme := "# x\n\n## Layout\n\nText.\n\n```\n# The API\napi/v1alpha1/   the types\n\ncontrollers     reconcilers\n```\n\n## After\n\n```\nnot/this  no\n```\n"
	if diff := cmp.Diff([]string{"api/v1alpha1", "controllers"}, layoutPaths(readme)); diff != "" {
		t.Errorf("layoutPaths (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"internal/new"}, unnamed([]string{"api/v1alpha1", "internal/new"}, []string{"api/v1alpha1"})); diff != "" {
		t.Errorf("unnamed (-want +got):\n%s", diff)
	}
}

// TestLayoutNamesEveryPackage keeps the layout section of DEVELOPMENT.md true: a new Go
// package gets its line there, a moved or removed one loses it. (test/layers checks that
// its groups are the layers.)
func TestLayoutNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "DEVELOPMENT.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := layoutPaths(string(b))
	if len(named) == 0 {
		t.Fatal("DEVELOPMENT.md has no \"## Layout\" section with a fenced block of paths")
	}
	dirs, err := goPackageDirs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if missing := unnamed(dirs, named); len(missing) > 0 {
		t.Errorf("DEVELOPMENT.md's layout section does not name these Go packages; add a line for each:\n  %s",
			strings.Join(missing, "\n  "))
	}
	for _, p := range named {
		if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
			t.Errorf("DEVELOPMENT.md's layout section names %s, which does not exist: %v", p, err)
		}
	}
}
