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

package v1alpha1_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// kubectl explain prints a description's line breaks as they are and wraps long lines
// itself, so a break in the middle of a sentence reads as a cut-off sentence; and it shows
// no `default:` of the schema, so the description must say it.

// foreignFields are described by Kubernetes' own types, not ours.
var foreignFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true, "conditions": true}

func TestCRDDescriptions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs found: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			checkSchema(t, crd.Spec.Names.Kind, v.Schema.OpenAPIV3Schema)
		}
	}
}

func checkSchema(t *testing.T, path string, s *apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	if s == nil {
		return
	}
	lines := strings.Split(s.Description, "\n")
	for i := range len(lines) - 1 {
		if !strings.HasSuffix(strings.TrimSpace(lines[i]), ".") && !strings.HasSuffix(strings.TrimSpace(lines[i]), ":") {
			t.Errorf("%s: description breaks mid-sentence after %q", path, lines[i])
		}
	}
	if s.Default != nil && s.Type != "object" {
		want := strings.Trim(string(s.Default.Raw), `"`)
		if !strings.Contains(s.Description, "default") || !strings.Contains(s.Description, want) {
			t.Errorf("%s: default %s is not in the description %q", path, want, s.Description)
		}
	}
	for name, p := range s.Properties {
		if foreignFields[name] || isSecretKeySelector(&p) {
			continue
		}
		checkSchema(t, path+"."+name, &p)
	}
	if s.Items != nil && s.Items.Schema != nil {
		checkSchema(t, path+"[]", s.Items.Schema)
	}
}

// isSecretKeySelector is core/v1's SecretKeySelector, described upstream.
func isSecretKeySelector(s *apiextensionsv1.JSONSchemaProps) bool {
	_, key := s.Properties["key"]
	_, optional := s.Properties["optional"]
	return key && optional
}
