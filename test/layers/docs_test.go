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
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// layerNames name the rows of layers, bottom up: docs/architecture.md and DEVELOPMENT.md
// call the layers by these names. A new layer gets a name here.
var layerNames = []string{
	"Leaves",
	"Types and rules",
	"Look-ups and readers",
	"Capabilities",
	"Tools",
	"Remote agents",
	"Doors and the turn engine",
	"The reconcile flow",
	"Announce delivery",
	"Controllers and servers",
	"Controller wiring",
	"The transcript-store program",
	"Harnesses and suites",
}

// docLayer is a layer as a page names it.
type docLayer struct {
	Name     string
	Packages []string
}

// want is layers with their names, each layer's packages sorted.
func want() []docLayer {
	var out []docLayer
	for i, l := range layers {
		name := "(no name: add one to layerNames)"
		if i < len(layerNames) {
			name = layerNames[i]
		}
		out = append(out, docLayer{name, slices.Sorted(slices.Values(l))})
	}
	return out
}

var (
	// archRow is a row of the architecture page's layer table: | 3. Tools | `pkg`, ... | ... |
	archRow = regexp.MustCompile(`^\| (\d+)\. ([^|]+?) \| ([^|]*) \|`)
	// pkgSpan is a code span that names a package of the module.
	pkgSpan = regexp.MustCompile("`((?:api|controllers|internal|webhook)(?:/[a-z0-9]+)*)`")
	// layoutGroup is a group heading of DEVELOPMENT.md's layout: # Layer 3: Tools
	layoutGroup = regexp.MustCompile(`^# Layer (\d+): (.+)$`)
)

// architectureLayers reads the rows of docs/architecture.md's "## The layers" table.
func architectureLayers(md string) []docLayer {
	var out []docLayer
	in := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = line == "## The layers"
			continue
		}
		m := archRow.FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		l := docLayer{Name: strings.TrimSpace(m[2])}
		for _, p := range pkgSpan.FindAllStringSubmatch(m[3], -1) {
			l.Packages = append(l.Packages, p[1])
		}
		slices.Sort(l.Packages)
		if n, _ := strconv.Atoi(m[1]); n != len(out) {
			l.Name = m[1] + ". " + l.Name + " (out of order)"
		}
		out = append(out, l)
	}
	return out
}

// layoutLayers reads the "# Layer N: name" groups of DEVELOPMENT.md's layout block, each
// line's first field a path; other groups (programs, tests, not Go) are left out.
func layoutLayers(md string) []docLayer {
	var out []docLayer
	in, block := false, false
	var cur *docLayer
	sc := bufio.NewScanner(strings.NewReader(md))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in, block = line == "## Layout", false
		case !in:
		case strings.HasPrefix(line, "```"):
			block = !block
		case !block:
		case strings.HasPrefix(line, "#"):
			cur = nil
			if m := layoutGroup.FindStringSubmatch(line); m != nil {
				name := m[2]
				if n, _ := strconv.Atoi(m[1]); n != len(out) {
					name = m[1] + ". " + name + " (out of order)"
				}
				out = append(out, docLayer{Name: name})
				cur = &out[len(out)-1]
			}
		case cur != nil && strings.TrimSpace(line) != "":
			cur.Packages = append(cur.Packages, strings.TrimSuffix(strings.Fields(line)[0], "/"))
		}
	}
	for i := range out {
		slices.Sort(out[i].Packages)
	}
	return out
}

func TestReadLayers(t *testing.T) {
	arch := "## The layers\n\n| Layer | Packages | What |\n|---|---|---|\n| 0. Leaves | `api/v1alpha1`, `internal/sse` | `/events` and more |\n| 1. Rules | `internal/policy` | x |\n\n## Next\n| 2. Not | `internal/x` | y |\n"
	if diff := cmp.Diff([]docLayer{{"Leaves", []string{"api/v1alpha1", "internal/sse"}}, {"Rules", []string{"internal/policy"}}}, architectureLayers(arch)); diff != "" {
		t.Errorf("architectureLayers (-want +got):\n%s", diff)
	}
	dev := "## Layout\n\n```\n# Layer 0: Leaves\ninternal/sse/   reads\napi/v1alpha1/   the kinds\n\n# Programs\ncmd/manager/  main\n# Layer 1: Rules\ninternal/policy/  rules\n```\n"
	if diff := cmp.Diff([]docLayer{{"Leaves", []string{"api/v1alpha1", "internal/sse"}}, {"Rules", []string{"internal/policy"}}}, layoutLayers(dev)); diff != "" {
		t.Errorf("layoutLayers (-want +got):\n%s", diff)
	}
}

// TestDocsNameTheLayers: one layer story. docs/architecture.md's layer table and
// DEVELOPMENT.md's layout name the layers of this package's table, in its order, with its
// names and exactly its packages.
func TestDocsNameTheLayers(t *testing.T) {
	if len(layerNames) != len(layers) {
		t.Errorf("layerNames has %d names for %d layers", len(layerNames), len(layers))
	}
	for page, read := range map[string]func(string) []docLayer{
		"docs/architecture.md": architectureLayers,
		"DEVELOPMENT.md":       layoutLayers,
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", page))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want(), read(string(b))); diff != "" {
			t.Errorf("%s does not name the layers of test/layers (-test/layers +%s):\n%s", page, page, diff)
		}
	}
}
