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
	// The chart installs agent-sandbox itself (sandboxes.agentSandbox.install): the one the
	// sandbox story installed with kustomize goes first, as a user's would.
	uninstallAgentSandbox(ctx, t)
	controller, tag, _ := strings.Cut(harness.SandboxControllerImage, ":")
	helm(ctx, t, "install", "agent-session-operator", filepath.Join(cl.RepoRoot, "dist", "chart"),
		"--namespace", operatorNS, "--create-namespace",
		"--set", "image.repository="+harness.OperatorImage, "--set", "image.tag=v2",
		"--set", "sandboxes.enabled=true", "--set", "sandboxes.image="+harness.SandboxRuntimeImage,
		"--set", "sandboxes.agentSandbox.image.repository="+controller, "--set", "sandboxes.agentSandbox.image.tag="+tag,
		"--wait", "--timeout", rolloutTimeout.String())
	waitAvailable(ctx, t)
	helmAgentSandbox(ctx, t)
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

// helmAgentSandbox: the chart's agent-sandbox controller runs in the release's namespace,
// serves its CRDs' conversion webhook there (it patched their CA with the chart's RBAC), and
// the chart's manager, with --sandboxes, keeps a sandboxed Agent's SandboxTemplate, which
// that controller labels as its own.
func helmAgentSandbox(ctx context.Context, t *testing.T) {
	kubectl(ctx, t, "-n", operatorNS, "rollout", "status", "deploy/agent-sandbox-controller", "--timeout="+rolloutTimeout.String())
	waitAgentSandboxAPI(ctx, t)
	if svc := kubectl(ctx, t, "get", "crd", "sandboxes.agents.x-k8s.io", "-o", "jsonpath={.spec.conversion.webhook.clientConfig.service.namespace}"); svc != operatorNS {
		t.Errorf("the Sandbox CRD converts through namespace %q, want the release's %s", svc, operatorNS)
	}
	args := kubectl(ctx, t, "-n", operatorNS, "get", "deploy", deployment, "-o", `jsonpath={.spec.template.spec.containers[?(@.name=="manager")].args}`)
	if !strings.Contains(args, `"--sandboxes"`) || !strings.Contains(args, "--sandbox-image="+harness.SandboxRuntimeImage) {
		t.Errorf("the chart's manager args: %s, want --sandboxes and --sandbox-image", args)
	}
	apply(ctx, t, `apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata: {name: helm-boxed, namespace: default}
spec:
  model: {provider: scripted}
  sandbox: {enabled: true}
`)
	if err := harness.Poll(ctx, objectTimeout, "the sandboxed Agent's template, labelled by agent-sandbox", func() error {
		out, err := cl.Kubectl(ctx, "-n", "default", "get", "sandboxtemplate", "helm-boxed-sandbox", "-o", `jsonpath={.metadata.labels.agents\.x-k8s\.io/sandbox-template-ref-hash}`)
		if err != nil || out == "" {
			return fmt.Errorf("%q %v", out, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rv := kubectl(ctx, t, "-n", "default", "get", "sandboxtemplate", "helm-boxed-sandbox", "-o", "jsonpath={.metadata.resourceVersion}")
	// A new generation of the Agent reconciled: the template is not written again (the
	// Agent controller keeps agent-sandbox's label; taking it away had the two controllers
	// undo each other without end).
	kubectl(ctx, t, "-n", "default", "patch", "agent", "helm-boxed", "--type=merge", "-p", `{"spec":{"description":"generation 2"}}`)
	if err := harness.Poll(ctx, objectTimeout, "the Agent's generation 2 reconciled", func() error {
		out, err := cl.Kubectl(ctx, "-n", "default", "get", "agent", "helm-boxed", "-o", "jsonpath={.metadata.generation}={.status.observedGeneration}")
		if err != nil || out != "2=2" {
			return fmt.Errorf("generation=observed %q %v", out, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if after := kubectl(ctx, t, "-n", "default", "get", "sandboxtemplate", "helm-boxed-sandbox", "-o", "jsonpath={.metadata.resourceVersion}"); after != rv {
		t.Errorf("the Agent's reconcile wrote its template again (resourceVersion %s, then %s)", rv, after)
	}
	logs, _ := cl.Kubectl(ctx, "-n", operatorNS, "logs", "deploy/agent-sandbox-controller")
	n := 0
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"Pool status"`) && strings.Contains(line, "helm-boxed-sandbox") {
			n++
		}
	}
	t.Logf("the chart's agent-sandbox controller logged Pool status for helm-boxed-sandbox %d times", n)
	kubectl(ctx, t, "-n", "default", "delete", "agent", "helm-boxed", "--wait", "--timeout="+objectTimeout.String())
}
