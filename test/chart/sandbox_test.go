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
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// agentSandboxKinds are the objects sandboxes.agentSandbox.install adds, by "Kind/name".
var agentSandboxKinds = []string{
	"CustomResourceDefinition/sandboxes.agents.x-k8s.io",
	"CustomResourceDefinition/sandboxclaims.extensions.agents.x-k8s.io",
	"CustomResourceDefinition/sandboxtemplates.extensions.agents.x-k8s.io",
	"CustomResourceDefinition/sandboxwarmpools.extensions.agents.x-k8s.io",
	"ServiceAccount/agent-sandbox-controller",
	"ClusterRole/agent-sandbox-controller", "ClusterRoleBinding/agent-sandbox-controller",
	"ClusterRole/agent-sandbox-controller-extensions", "ClusterRoleBinding/agent-sandbox-controller-extensions",
	"Role/agent-sandbox-controller", "RoleBinding/agent-sandbox-controller",
	"Service/agent-sandbox-webhook-service", "Deployment/agent-sandbox-controller",
}

// TestChartSandboxes renders sandboxes.enabled: the manager's --sandboxes and
// --sandbox-image, and with agentSandbox.install (its default) agent-sandbox's CRDs and
// controller (TestChartAgentSandbox). Off (the default) nothing of it renders;
// install=false keeps only the flags.
func TestChartSandboxes(t *testing.T) {
	h := helm(t)
	render := func(set ...string) map[string]map[string]any { return renderObjects(t, h, set...) }
	for name, c := range map[string]struct {
		set       []string
		wantArgs  []string
		installed bool
	}{
		"off by default": {},
		"on":             {set: []string{"sandboxes.enabled=true", "sandboxes.image=example/sandbox:1"}, wantArgs: []string{"--sandboxes", "--sandbox-image=example/sandbox:1"}, installed: true},
		"on, agent-sandbox already in the cluster": {set: []string{"sandboxes.enabled=true", "sandboxes.agentSandbox.install=false"}, wantArgs: []string{"--sandboxes"}},
		"install without sandboxes":                {set: []string{"sandboxes.agentSandbox.install=true"}},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(c.set...)
			var args []string
			for key, o := range objs {
				if key == "Deployment/agent-session-operator-controller-manager" {
					args = managerArgs(o)
				}
			}
			var sandboxArgs []string
			for _, a := range args {
				if strings.HasPrefix(a, "--sandbox") {
					sandboxArgs = append(sandboxArgs, a)
				}
			}
			if d := cmp.Diff(c.wantArgs, sandboxArgs); d != "" {
				t.Errorf("the manager's sandbox flags (-want +got):\n%s", d)
			}
			for _, k := range agentSandboxKinds {
				if _, ok := objs[k]; ok != c.installed {
					t.Errorf("%s rendered: %v, want %v", k, ok, c.installed)
				}
			}
		})
	}

}

// TestChartAgentSandbox renders sandboxes.enabled with a controller image of its own: the
// CRDs and ClusterRoles are the module's (config/agent-sandbox), but for the conversion
// webhook's namespace, the release's; the Deployment runs the values' image, told that
// namespace, non-root. The default image is the release config/agent-sandbox names.
func TestChartAgentSandbox(t *testing.T) {
	h := helm(t)
	render := func(set ...string) map[string]map[string]any { return renderObjects(t, h, set...) }
	root := testenv.RepoRoot()
	kust, err := os.ReadFile(filepath.Join(root, "config", "agent-sandbox", "controller", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	released := regexp.MustCompile(`image: (registry\.k8s\.io/agent-sandbox/agent-sandbox-controller:\S+)`).FindSubmatch(kust)
	def := dig(render("sandboxes.enabled=true")["Deployment/agent-sandbox-controller"], "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	if released == nil || def["image"] != string(released[1]) {
		t.Errorf("the default agent-sandbox controller image %v, want config/agent-sandbox's %q", def["image"], released)
	}

	objs := render("sandboxes.enabled=true", "sandboxes.agentSandbox.image.repository=example/asc", "sandboxes.agentSandbox.image.tag=t1")
	for _, k := range agentSandboxKinds[:4] {
		crd := objs[k]
		meta := crd["metadata"].(map[string]any)
		if a, _ := meta["annotations"].(map[string]any); a["helm.sh/resource-policy"] != "keep" {
			t.Errorf("%s: annotations %v, want helm.sh/resource-policy: keep (an uninstall must not delete every Sandbox)", k, a)
		}
		svc := dig(crd, "spec", "conversion", "webhook", "clientConfig", "service").(map[string]any)
		if svc["namespace"] != namespace || svc["name"] != "agent-sandbox-webhook-service" {
			t.Errorf("%s: conversion webhook %v, want agent-sandbox-webhook-service in %s", k, svc, namespace)
		}
		// Apart from that, the module's own CRD (config/agent-sandbox/crds/<group>_<plural>.yaml).
		plural, group, _ := strings.Cut(strings.TrimPrefix(k, "CustomResourceDefinition/"), ".")
		var want map[string]any
		readYAML(t, filepath.Join(root, "config", "agent-sandbox", "crds", group+"_"+plural+".yaml"), &want)
		dig(want, "spec", "conversion", "webhook", "clientConfig", "service").(map[string]any)["namespace"] = namespace
		if d := cmp.Diff(want["spec"], crd["spec"]); d != "" {
			t.Errorf("%s is not the module's CRD (-want +got):\n%s", k, d)
		}
	}
	for _, r := range []struct{ role, file string }{
		{"ClusterRole/agent-sandbox-controller", "rbac.generated.yaml"},
		{"ClusterRole/agent-sandbox-controller-extensions", "extensions-rbac.generated.yaml"},
	} {
		var want map[string]any
		readYAML(t, filepath.Join(root, "config", "agent-sandbox", "controller", r.file), &want)
		if d := cmp.Diff(want["rules"], objs[r.role]["rules"]); d != "" {
			t.Errorf("%s's rules are not the module's %s (-want +got):\n%s", r.role, r.file, d)
		}
	}
	pod := dig(objs["Deployment/agent-sandbox-controller"], "spec", "template", "spec").(map[string]any)
	ctr := pod["containers"].([]any)[0].(map[string]any)
	if ctr["image"] != "example/asc:t1" {
		t.Errorf("agent-sandbox's controller image %v, want the values' example/asc:t1", ctr["image"])
	}
	var args []string
	for _, a := range ctr["args"].([]any) {
		args = append(args, a.(string))
	}
	for _, want := range []string{"--extensions", "--webhook-namespace=" + namespace} {
		if !slices.Contains(args, want) {
			t.Errorf("agent-sandbox's controller args %v lack %s", args, want)
		}
	}
	sc := ctr["securityContext"].(map[string]any)
	if sc["allowPrivilegeEscalation"] != false || sc["readOnlyRootFilesystem"] != true || dig(pod, "securityContext", "runAsNonRoot") != true {
		t.Errorf("agent-sandbox's controller Pod: %v, container %v: want non-root, no escalation, read-only root", pod["securityContext"], sc)
	}
	for _, k := range []string{"ServiceAccount/agent-sandbox-controller", "Role/agent-sandbox-controller", "Service/agent-sandbox-webhook-service", "Deployment/agent-sandbox-controller"} {
		if ns := dig(objs[k], "metadata", "namespace"); ns != namespace {
			t.Errorf("%s in namespace %v, want the release's %s", k, ns, namespace)
		}
	}
}

// renderObjects is helm template of the chart with set, by "Kind/name".
func renderObjects(t *testing.T, h string, set ...string) map[string]map[string]any {
	t.Helper()
	args := []string{"template", release, "dist/chart", "-n", namespace}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return objectsOf(t, testenv.Run(t, testenv.RepoRoot(), nil, h, args...))
}

// dig is the value at path in a decoded object, nil when any step is missing.
func dig(o map[string]any, path ...string) any {
	var v any = o
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}
