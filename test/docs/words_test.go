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
	"strings"
	"testing"
)

// repoRoot is the repository root, seen from this package's directory.
const repoRoot = "../.."

// seedsWord is what the user-facing text must not say: the project's name for its
// specification. Readers know it as the session-tools specification.
var seedsWord = regexp.MustCompile(`(?i)\bseeds\b|\bseed's\b`)

// userFacing are the globs of the text users read: the README and docs, the API types
// (they generate docs/reference/api.md and the CRDs' descriptions) and the installed YAML.
var userFacing = []string{
	"README.md", "CHANGELOG.md", "DEVELOPMENT.md", "CONTRIBUTING.md", "docs/*.md", "docs/*/*.md",
	"api/v1alpha1/*.go",
	"config/crd/bases/*.yaml", "config/rbac/*.yaml",
	"dist/chart/crds/*.yaml", "dist/chart/templates/*.yaml", "dist/chart/values.yaml",
}

func TestUserFacingTextNamesTheSpecification(t *testing.T) {
	for _, glob := range userFacing {
		files, err := filepath.Glob(filepath.Join(repoRoot, glob))
		if err != nil || len(files) == 0 {
			t.Fatalf("glob %s matched nothing (err %v)", glob, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				if seedsWord.MatchString(line) {
					t.Errorf("%s:%d says %q; say \"the session-tools specification\": %s",
						f, i+1, seedsWord.FindString(line), strings.TrimSpace(line))
				}
			}
		}
	}
}
