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

package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/agent-sessions/agent-session-operator/test/cluster/harness"
)

// helm runs the Helm client against the cluster, its own state under the work directory.
func helm(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, cl.HelmBin(), append([]string{"--kubeconfig", cl.Kubeconfig}, args...)...)
	home := filepath.Join(cl.WorkDir, "helm")
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// objects lists "Kind namespace/name" of every object in a multi-document YAML stream.
func objects(t *testing.T, stream string, skipKinds ...string) []string {
	t.Helper()
	var got []string
	for _, doc := range strings.Split(stream, "\n---") {
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if o.Kind == "" || contains(skipKinds, o.Kind) {
			continue
		}
		got = append(got, fmt.Sprintf("%s %s/%s", o.Kind, o.Metadata.Namespace, o.Metadata.Name))
	}
	sort.Strings(got)
	return got
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// chartMatchesKustomize: the chart with default values renders the objects config/default
// does (the chart's CRDs come from its crds/ directory; Helm creates the namespace).
func chartMatchesKustomize(ctx context.Context, t *testing.T) {
	chart := filepath.Join(cl.RepoRoot, "dist", "chart")
	rendered := helm(ctx, t, "template", "agent-session-operator", chart, "--namespace", operatorNS, "--include-crds")
	want := objects(t, installYAML(t, harness.OperatorImage+":v1"), "Namespace")
	got := objects(t, rendered)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the Helm chart and config/default differ:\nchart:\n%s\n\nconfig/default:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	t.Logf("the chart renders the same %d objects as config/default", len(got))
}

// uninstall removes the kustomize install as a user would: their objects first (so the
// manager is there to finish them), then the install; the PersistentVolume is released for
// the next claim.
func uninstall(ctx context.Context, t *testing.T) {
	kubectl(ctx, t, "delete", "sessionsends,subagentruns,agentsessions,agents,sessionpolicies", "--all", "-n", "default", "--wait", "--timeout="+objectTimeout.String())
	out, err := cl.KubectlIn(ctx, installYAML(t, harness.OperatorImage+":v2"), "delete", "--ignore-not-found", "--wait", "--timeout="+rolloutTimeout.String(), "-f", "-")
	if err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	kubectl(ctx, t, "patch", "pv", "transcripts-local", "--type=json", `-p=[{"op":"remove","path":"/spec/claimRef"}]`)
}

func helmInstall(ctx context.Context, t *testing.T) {
	chartMatchesKustomize(ctx, t)
	uninstall(ctx, t)
	helm(ctx, t, "install", "agent-session-operator", filepath.Join(cl.RepoRoot, "dist", "chart"),
		"--namespace", operatorNS, "--create-namespace",
		"--set", "image.repository="+harness.OperatorImage, "--set", "image.tag=v2",
		"--wait", "--timeout", rolloutTimeout.String())
	waitAvailable(ctx, t)
	applySamples(ctx, t)
	apply(ctx, t, sample(t, "sessions_v1alpha1_sessionsend.yaml"))
	kubectl(ctx, t, "wait", "--for=condition=Completed", "sessionsend/ping-research", "--timeout="+objectTimeout.String())
	if got := kubectl(ctx, t, "get", "sessionsend/ping-research", "-o", "jsonpath={.status.status} {.status.reply}"); got != "ok echo: ping" {
		t.Errorf("send after the Helm install: %q, want ok echo: ping", got)
	}
	if _, err := cl.Apply(ctx, `apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata: {name: helm-denied}
spec: {sessionKey: "agent:main:discord:group:general", message: hi}
`); err == nil {
		t.Errorf("after the Helm install a denied send was admitted")
	}
}
