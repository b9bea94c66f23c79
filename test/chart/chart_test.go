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
// every difference between them is an install that behaves differently. This file runs with
// make test-cluster (the cluster build tag); the chart's own checks (values schema, NOTES,
// lint, Artifact Hub annotations) run in make test. Both use the helm that
// hack/cluster-binaries.sh builds once per machine.
package chart

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// image is the image config/default installs, which the chart's defaults name too.
const image = "agent-session-operator:dev"

// TestChartMatchesKustomize renders the chart with its default values and config/default
// (and, in cert-manager mode, the chart with webhook.certs=cert-manager and the cert-manager
// overlay) and compares every object field by field. What only Helm adds (its labels, the
// pull policy) and what only kustomize installs (the Namespace, which helm creates, and the
// CRDs, which the chart ships in crds/) are left out.
func TestChartMatchesKustomize(t *testing.T) {
	root := testenv.RepoRoot()
	bins := testenv.ToolDir(t, "hack/cluster-binaries.sh", "helm")
	kubectl := filepath.Join(testenv.ToolDir(t, "hack/envtest-binaries.sh"), "kubectl")
	for mode, c := range map[string]struct {
		set, overlay string
	}{
		"self-signed":  {set: "webhook.certs=self-signed", overlay: "config/default"},
		"cert-manager": {set: "webhook.certs=cert-manager", overlay: "config/overlays/cert-manager"},
	} {
		t.Run(mode, func(t *testing.T) {
			chart := testenv.Run(t, root, nil, filepath.Join(bins, "helm"), "template", release, "dist/chart", "-n", namespace, "--set", c.set)
			kust := testenv.Run(t, root, []string{"KUBECTL=" + kubectl}, "hack/install-yaml.sh", image, c.overlay)
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
