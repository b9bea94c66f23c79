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
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// artifactHubCRD is an entry of Chart.yaml's artifacthub.io/crds annotation.
type artifactHubCRD struct {
	Kind, Version, Name, DisplayName, Description string
}

// TestArtifactHubAnnotations holds Chart.yaml's Artifact Hub annotations to the chart: the
// crds list names exactly the CRDs in crds/ (kind, name, storage version), each described,
// and the license is the repository's.
func TestArtifactHubAnnotations(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(), "dist/chart")
	var chart struct{ Annotations map[string]string }
	readYAML(t, filepath.Join(dir, "Chart.yaml"), &chart)
	if got := chart.Annotations["artifacthub.io/license"]; got != "Apache-2.0" {
		t.Errorf("artifacthub.io/license = %q, want Apache-2.0 (LICENSE)", got)
	}
	if got := chart.Annotations["artifacthub.io/operator"]; got != "true" {
		t.Errorf("artifacthub.io/operator = %q, want \"true\"", got)
	}
	var listed []artifactHubCRD
	if err := yaml.Unmarshal([]byte(chart.Annotations["artifacthub.io/crds"]), &listed); err != nil {
		t.Fatalf("artifacthub.io/crds: %v", err)
	}
	type crd struct{ Kind, Version, Name string }
	var got []crd
	for _, c := range listed {
		if c.DisplayName == "" || c.Description == "" {
			t.Errorf("artifacthub.io/crds: %s has no displayName or description", c.Kind)
		}
		got = append(got, crd{c.Kind, c.Version, c.Name})
	}

	files, err := filepath.Glob(filepath.Join(dir, "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []crd
	for _, f := range files {
		var def apiextensionsv1.CustomResourceDefinition
		readYAML(t, f, &def)
		for _, v := range def.Spec.Versions {
			if v.Storage {
				want = append(want, crd{def.Spec.Names.Kind, v.Name, def.Name})
			}
		}
	}
	byKind := cmpopts.SortSlices(func(a, b crd) bool { return a.Kind < b.Kind })
	if d := cmp.Diff(want, got, byKind); d != "" {
		t.Errorf("artifacthub.io/crds (+) and dist/chart/crds (-) differ; update Chart.yaml:\n%s", d)
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
