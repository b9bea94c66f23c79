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
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// objectsOf decodes a multi-document stream into its objects by "Kind/name", normalized.
func objectsOf(t *testing.T, stream string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, doc := range strings.Split(stream, "\n---") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if len(o) == 0 {
			continue
		}
		normalize(o)
		meta, _ := o["metadata"].(map[string]any)
		out[fmt.Sprintf("%s/%s", o["kind"], meta["name"])] = o
	}
	return out
}

// normalize drops what only Helm adds.
func normalize(o map[string]any) {
	if meta, ok := o["metadata"].(map[string]any); ok {
		if labels, ok := meta["labels"].(map[string]any); ok {
			for _, l := range []string{"app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart"} {
				delete(labels, l)
			}
		}
	}
	if o["kind"] != "Deployment" {
		return
	}
	spec, _ := o["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	containers, _ := pod["containers"].([]any)
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok {
			delete(m, "imagePullPolicy")
		}
	}
}
