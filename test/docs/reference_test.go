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

// flagDef matches a flag's definition on a flag set: flag.StringVar(&x, "name", ... or
// fs.Duration("name", ...
var flagDef = regexp.MustCompile(`\b(?:flag|fs)\.(?:[A-Z][A-Za-z0-9]*)\((?:&[A-Za-z0-9_.]+,\s*)?"([a-z0-9-]+)"`)

// metricName matches the name of a metric the code defines: the operator's metrics start
// with agent_sessions_ (the manager) or transcript_ (the store).
var metricName = regexp.MustCompile(`"((?:agent_sessions|transcript)_[a-z_]+)"`)

// definedIn returns the first submatches of re in the non-test Go files of dirs, sorted
// and without repeats.
func definedIn(t *testing.T, re *regexp.Regexp, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				if !slices.Contains(out, m[1]) {
					out = append(out, m[1])
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

func TestDefinitions(t *testing.T) {
	src := "flag.StringVar(&o.addr, \"metrics-bind-address\", \":8080\", \"x\")\nfs.StringVar(&m.Mode, \"webhook-certs\", x, \"y\")\n" +
		"a := flag.String(\"token-audiences\", x, \"z\")\nName: \"agent_sessions_turns_total\", x \"transcript_open_files\" \"agent_sessions\""
	var flags, metrics []string
	for _, m := range flagDef.FindAllStringSubmatch(src, -1) {
		flags = append(flags, m[1])
	}
	for _, m := range metricName.FindAllStringSubmatch(src, -1) {
		metrics = append(metrics, m[1])
	}
	if diff := cmp.Diff([]string{"metrics-bind-address", "webhook-certs", "token-audiences"}, flags); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"agent_sessions_turns_total", "transcript_open_files"}, metrics); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

// missingFrom returns the names the page does not mention as `prefix+name`.
func missingFrom(t *testing.T, page, prefix string, names []string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, n := range names {
		if !strings.Contains(string(b), "`"+prefix+n) {
			missing = append(missing, n)
		}
	}
	return missing
}

// TestFlagsPageNamesEveryFlag: a flag of the manager or the transcript store is documented
// when it is added.
func TestFlagsPageNamesEveryFlag(t *testing.T) {
	flags := definedIn(t, flagDef, "cmd/manager", "cmd/transcript-store", "internal/certs")
	if len(flags) < 30 {
		t.Fatalf("found %d flags; the pattern no longer matches how flags are defined", len(flags))
	}
	if missing := missingFrom(t, "docs/reference/flags-and-values.md", "--", flags); len(missing) > 0 {
		t.Errorf("docs/reference/flags-and-values.md has no row for these flags:\n  --%s", strings.Join(missing, "\n  --"))
	}
}

// TestMetricsPageNamesEveryMetric: a metric is documented when it is added.
func TestMetricsPageNamesEveryMetric(t *testing.T) {
	metrics := definedIn(t, metricName, "cmd", "controllers", "internal", "webhook")
	if len(metrics) < 20 {
		t.Fatalf("found %d metrics; the pattern no longer matches how metrics are named", len(metrics))
	}
	if missing := missingFrom(t, "docs/reference/metrics.md", "", metrics); len(missing) > 0 {
		t.Errorf("docs/reference/metrics.md has no row for these metrics:\n  %s", strings.Join(missing, "\n  "))
	}
}
