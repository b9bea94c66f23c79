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

package e2e

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// Markers in the pages (README.md and docs/): a fenced sh block right after tourMarker is a
// tour step and runs here literally; a fenced block right after outputMarker holds lines the
// output of the tour block before it prints, each a whole line (OutputLine), "…" standing
// for text that differs from run to run. Other sh blocks (install in a cluster, examples)
// never run here.
const (
	tourMarker   = "<!-- tour -->"
	outputMarker = "<!-- tour: output -->"
)

type tourBlock struct {
	script string
	want   []string
}

// readTour returns a page's tour blocks in order.
func readTour(path string) ([]tourBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var blocks []tourBlock
	sc := bufio.NewScanner(f)
	fenced := func() ([]string, error) {
		var lines []string
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "```" {
				return lines, nil
			}
			lines = append(lines, sc.Text())
		}
		return nil, fmt.Errorf("unclosed fenced block in %s", path)
	}
	for sc.Scan() {
		switch strings.TrimSpace(sc.Text()) {
		case tourMarker:
			if !sc.Scan() || strings.TrimSpace(sc.Text()) != "```sh" {
				return nil, fmt.Errorf("%s: %s is not followed by a ```sh block", path, tourMarker)
			}
			lines, err := fenced()
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, tourBlock{script: strings.Join(lines, "\n")})
		case outputMarker:
			if len(blocks) == 0 || !sc.Scan() || strings.TrimSpace(sc.Text()) != "```" {
				return nil, fmt.Errorf("%s: %s must follow a tour block and precede a ``` block", path, outputMarker)
			}
			lines, err := fenced()
			if err != nil {
				return nil, err
			}
			blocks[len(blocks)-1].want = lines
		}
	}
	return blocks, sc.Err()
}

// tourPages are the pages that may hold tour steps, relative to the repository root:
// README.md (the three-minute tour), docs/getting-started.md, then every other page under
// docs/ in path order.
func tourPages(root string) ([]string, error) {
	pages := []string{"README.md", "docs/getting-started.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if rel = filepath.ToSlash(rel); err == nil && !slices.Contains(pages, rel) {
			pages = append(pages, rel)
		}
		return err
	})
	return pages, err
}

// runTour runs a page's tour blocks in one shell, as a reader does in one terminal that has
// sourced this run's environment (docs/getting-started.md says to), and checks each block's
// output.
func runTour(page string, blocks []tourBlock) {
	var script strings.Builder
	script.WriteString("set -eo pipefail\nsource .local/run-local/env\n")
	for i, b := range blocks {
		fmt.Fprintf(&script, "echo '@@tour block %d'\n%s\n", i, b.script)
	}
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = workDir
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s:\n%s", page, out)
	parts := strings.Split(string(out), "@@tour block ")
	Expect(parts).To(HaveLen(len(blocks) + 1))
	for i, b := range blocks {
		for _, line := range b.want {
			Expect(outputLine(line).MatchString(parts[i+1])).To(BeTrue(),
				"%s, tour block %d prints no line %q:\n%s\n--- it printed:\n%s", page, i, line, b.script, parts[i+1])
		}
	}
}

// outputLine matches the line of a page's output block as a whole line of what the block
// printed: "…" stands for any text, and a run of spaces for any run of spaces (a table's
// columns are as wide as what the cluster holds: other specs add agents).
func outputLine(line string) *regexp.Regexp {
	var re strings.Builder
	re.WriteString(`(?m)^`)
	for i, part := range strings.Split(strings.TrimRight(line, " "), "…") {
		if i > 0 {
			re.WriteString(`.*`)
		}
		re.WriteString(regexp.MustCompile(` +`).ReplaceAllString(regexp.QuoteMeta(part), ` +`))
	}
	re.WriteString(` *$`)
	return regexp.MustCompile(re.String())
}

// Each page's tour runs on its own (the samples are its only start), README's first.
var _ = Describe("the tour steps of the pages", func() {
	root := testenv.RepoRoot()
	pages, err := tourPages(root)
	tours := map[string][]tourBlock{}
	for _, p := range pages {
		if err == nil {
			tours[p], err = readTour(filepath.Join(root, p))
		}
	}
	It("reads the tour of README.md, docs/getting-started.md and the task pages", func() {
		Expect(err).NotTo(HaveOccurred())
		Expect(len(tours["README.md"])).To(BeNumerically(">=", 3), "the three-minute tour: one send, one spawn, the console")
		for _, p := range []string{"docs/getting-started.md", "docs/tasks/mcp-tools.md", "docs/tasks/require-approval.md", "docs/reference/mcp.md"} {
			Expect(tours[p]).NotTo(BeEmpty(), "%s has no tour step", p)
		}
	})
	for _, p := range pages {
		if blocks := tours[p]; len(blocks) > 0 {
			It("runs every tour block of "+p+" literally, from the repository root of a make run-local", func() {
				runTour(p, blocks)
			})
		}
	}
})
