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
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// Markers in README.md: a fenced sh block right after tourMarker is part of the tour and
// runs here literally; a fenced block right after outputMarker holds lines the output of
// the tour block before it must contain. Other sh blocks (install in a cluster, ...) never
// run here.
const (
	tourMarker   = "<!-- tour -->"
	outputMarker = "<!-- tour: output -->"
)

type tourBlock struct {
	script string
	want   []string
}

// readTour returns README.md's tour blocks in order.
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
				return nil, fmt.Errorf("%s is not followed by a ```sh block", tourMarker)
			}
			lines, err := fenced()
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, tourBlock{script: strings.Join(lines, "\n")})
		case outputMarker:
			if len(blocks) == 0 || !sc.Scan() || strings.TrimSpace(sc.Text()) != "```" {
				return nil, fmt.Errorf("%s must follow a tour block and precede a ``` block", outputMarker)
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

var _ = Describe("the README tour", func() {
	It("runs every tour block literally, from the repository root of a make run-local", func() {
		blocks, err := readTour(filepath.Join(testenv.RepoRoot(), "README.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(len(blocks)).To(BeNumerically(">=", 4))

		// A person reads the first lines before typing: by then the sample spawn has
		// announced (its Event is written after its status).
		Eventually(func() (string, error) {
			return kubectl("events", "--for", "agentsession/main-main")
		}, testenv.Timeout, testenv.Interval).Should(ContainSubstring("AnnounceDelivered"))

		// One shell for the whole tour, as in one terminal; a marker line splits the output.
		var script strings.Builder
		script.WriteString("set -eo pipefail\n")
		for i, b := range blocks {
			fmt.Fprintf(&script, "echo '@@tour block %d'\n%s\n", i, b.script)
		}
		cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
		cmd.Dir = workDir
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		parts := strings.Split(string(out), "@@tour block ")
		Expect(parts).To(HaveLen(len(blocks) + 1))
		// Table columns are as wide as what the cluster holds (other specs add agents):
		// runs of spaces compare as one.
		spaces := regexp.MustCompile(` {2,}`)
		for i, b := range blocks {
			for _, line := range b.want {
				Expect(spaces.ReplaceAllString(parts[i+1], " ")).To(ContainSubstring(spaces.ReplaceAllString(line, " ")),
					"tour block %d:\n%s", i, b.script)
			}
		}
	})
})
