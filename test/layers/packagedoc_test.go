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

package layers_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageSaysWhatItIsFor: every package of the module, test-only ones included, has
// exactly one package comment, "Package <name> ..." (a program's: "Command <name> ..."), so
// the room says what it is for; a license header is never it (a blank line keeps the
// header off the package clause).
func TestEveryPackageSaysWhatItIsFor(t *testing.T) {
	pkgs := goList(t, "-tags", "cluster", module+"...")
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages; the enumeration is broken", len(pkgs))
	}
	for _, p := range pkgs {
		path := strings.TrimPrefix(p.ImportPath, module)
		files, err := filepath.Glob(filepath.Join(p.Dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var docs []string
		for _, f := range files {
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if af.Doc == nil {
				continue
			}
			docs = append(docs, filepath.Base(f))
			if problem := packageDocProblem(af.Name.Name, af.Doc.Text()); problem != "" {
				t.Errorf("%s: the package comment of %s %s", path, filepath.Base(f), problem)
			}
		}
		switch {
		case len(docs) == 0:
			t.Errorf("%s has no package comment: say what the package is for in a doc.go", path)
		case len(docs) > 1:
			t.Errorf("%s has %d package comments (%s): keep one", path, len(docs), strings.Join(docs, ", "))
		}
	}
}

// packageDocProblem says what is wrong with a package comment of package name, "" if nothing.
func packageDocProblem(name, doc string) string {
	if strings.Contains(doc, "Licensed under") || strings.Contains(doc, "Copyright") {
		return "holds the license header: leave a blank line between the header and the comment"
	}
	base := strings.TrimSuffix(name, "_test")
	for _, start := range []string{"Package " + name + " ", "Package " + base + " ", "Command "} {
		if strings.HasPrefix(doc, start) && (start != "Command " || name == "main") {
			return ""
		}
	}
	return "does not start with \"Package " + name + "\" (or \"Command <name>\" for a program)"
}
