//go:build cluster

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

// Package chart keeps the Helm chart and config/default in step: both are hand-written, and
// every difference between them is an install that behaves differently. It runs with make
// test-cluster (the cluster build tag), which builds helm.
package chart

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

const (
	release   = "agent-session-operator"
	namespace = "agent-session-operator-system"
	image     = "agent-session-operator:dev"
)

// TestChartMatchesKustomize renders the chart with its default values and config/default
// (and, in cert-manager mode, the chart with webhook.certs=cert-manager and the cert-manager
// overlay) and compares every object field by field. What only Helm adds (its labels, the
// pull policy) and what only kustomize installs (the Namespace, which helm creates, and the
// CRDs, which the chart ships in crds/) are left out.
func TestChartMatchesKustomize(t *testing.T) {
	root := testenv.RepoRoot()
	bins := toolDir(t, root, "hack/cluster-binaries.sh", "helm")
	kubectl := filepath.Join(toolDir(t, root, "hack/envtest-binaries.sh"), "kubectl")
	for mode, c := range map[string]struct {
		set, overlay string
	}{
		"self-signed":  {set: "webhook.certs=self-signed", overlay: "config/default"},
		"cert-manager": {set: "webhook.certs=cert-manager", overlay: "config/overlays/cert-manager"},
	} {
		t.Run(mode, func(t *testing.T) {
			chart := run(t, root, nil, filepath.Join(bins, "helm"), "template", release, "dist/chart", "-n", namespace, "--set", c.set)
			kust := run(t, root, []string{"KUBECTL=" + kubectl}, "hack/install-yaml.sh", image, c.overlay)
			got, want := objectsOf(t, chart), objectsOf(t, kust)
			delete(want, "Namespace/"+namespace)
			for k := range want {
				if strings.HasPrefix(k, "CustomResourceDefinition/") {
					delete(want, k)
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("chart (+) and %s (-) differ:\n%s", c.overlay, d)
			}
		})
	}
}

// toolDir runs a hack/ script that builds tools once per machine and prints their directory.
func toolDir(t *testing.T, root, script string, args ...string) string {
	t.Helper()
	out := run(t, root, nil, filepath.Join(root, script), args...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

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
