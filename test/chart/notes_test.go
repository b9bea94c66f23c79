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

package chart

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// TestNotes renders templates/NOTES.txt (helm template leaves it out, so a copy of the
// chart turns it into a value of an object) and holds it to what the chart installs: every
// object it names is one the chart renders, and every user role the chart ships is listed
// for binding, so a new role or a renamed Service cannot leave the notes behind.
func TestNotes(t *testing.T) {
	h := helm(t)
	// A namespace that is no object name, so every agent-session-operator-* in the notes is one.
	set := []string{"-n", "ops", "--set", "metrics.serviceMonitor.enabled=true"}
	objects := objectsOf(t, testenv.Run(t, testenv.RepoRoot(), nil, h,
		append([]string{"template", release, "dist/chart"}, set...)...))
	notes := renderNotes(t, h, set)

	names := map[string]bool{}
	for _, o := range objects {
		names[o["metadata"].(map[string]any)["name"].(string)] = true
	}
	for _, n := range regexp.MustCompile(`agent-session-operator-[a-z0-9-]*[a-z0-9]`).FindAllString(notes, -1) {
		if !names[n] {
			t.Errorf("NOTES.txt names %s, which the chart does not install", n)
		}
	}
	for key := range objects {
		if role, ok := strings.CutPrefix(key, "ClusterRole/"); ok && strings.Contains(role, "-agent-sessions-") && !strings.Contains(notes, role) {
			t.Errorf("NOTES.txt does not say how to bind the user role %s", role)
		}
	}
	for _, want := range []string{
		"port-forward svc/agent-session-operator-history 8090",
		"https://agent-session-operator-history.ops.svc:8090/mcp?namespace=",
		"/sessions/agent:main:main/history?namespace=",
		"--audience agent-sessions",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES.txt lacks %q:\n%s", want, notes)
		}
	}
}

// renderNotes renders NOTES.txt as helm install would print it, from a copy of the chart in
// which it is a named template that an object's field includes.
func renderNotes(t *testing.T, h string, set []string) string {
	t.Helper()
	chart := filepath.Join(t.TempDir(), "chart")
	if err := os.CopyFS(chart, os.DirFS(filepath.Join(testenv.RepoRoot(), "dist/chart"))); err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join(chart, "templates")
	notes, err := os.ReadFile(filepath.Join(tmpl, "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"_notes.tpl": `{{- define "test.notes" }}` + string(notes) + `{{- end }}`,
		"notes.yaml": "kind: Notes\ntext: {{ include \"test.notes\" . | toJson }}\n",
	} {
		if err := os.WriteFile(filepath.Join(tmpl, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(tmpl, "NOTES.txt")); err != nil {
		t.Fatal(err)
	}
	out := testenv.Run(t, testenv.RepoRoot(), nil, h, append([]string{"template", release, chart,
		"--show-only", "templates/notes.yaml"}, set...)...)
	var doc struct{ Text string }
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil || doc.Text == "" {
		t.Fatalf("rendered notes %q: %v", out, err)
	}
	return doc.Text
}
