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
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/test/cluster/harness"
)

const (
	sandboxNS = "sandboxes"
	// sandboxIdle is the Agent's idleSeconds: long enough for a step's checks of a running
	// sandbox Pod on a loaded machine, short enough to wait for.
	sandboxIdle = 30
	// The agent-sandbox controller's namespace and Deployment, as its module names them.
	agentSandboxNS     = "agent-sandbox-system"
	agentSandboxDeploy = "agent-sandbox-controller"
	// releasedControllerImage is the image config/agent-sandbox/controller names; the test
	// runs the one built from the module (harness.SandboxControllerImage) instead.
	releasedControllerImage = "registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6"
)

// sandboxRun is what the sandbox story's steps learn and pass on.
var sandboxRun struct {
	runtime string // the RuntimeClass the sandboxes run with ("" is the node's default, runc)
	pod     string // session agent:coder:main's sandbox Pod
	podIP   string
	note    string // what the first session wrote
}

// TestSandboxInCluster is a sandboxed Agent's story on the real kubelet: agent-sandbox's
// controller as a real Pod, the operator with --sandboxes and the default sandbox image
// (images.Sandbox), a scripted Agent whose tools run in its session's sandbox Pod under
// gVisor when the node has runsc (RuntimeClass gvisor), else runc.
//
// This file's name sorts before cluster_test.go, so in `make test-cluster` this story runs
// first, on the kustomize install it makes; TestOperatorInCluster then applies config/default
// again (without --sandboxes) and goes on from there. Run alone:
// go test -tags cluster -run TestSandboxInCluster ./test/cluster/
func TestSandboxInCluster(t *testing.T) {
	ctx := context.Background()
	steps := []struct {
		name string
		fn   func(context.Context, *testing.T)
	}{
		{"agent-sandbox's CRDs and its controller as a real Pod", installAgentSandbox},
		{"the operator with --sandboxes and the default sandbox image", installWithSandboxes},
		{"a sandboxed Agent: its runtime in status", sandboxedAgent},
		{"exec runs in the session's sandbox Pod: its hostname, not root, no token", sandboxExec},
		{"the sandbox Pod is hostile by default", sandboxHostile},
		{"a session never reaches another session's sandbox", sandboxCrossSession},
		{"a user who may not read a session cannot exec in its sandbox", sandboxNoReadRight},
		{"idle: Suspended, its Pod gone; the next turn resumes it and reads the file back", sandboxSuspendResume},
		{"a spawn's attachments land at attachAs in the child's sandbox", sandboxSpawnAttachments},
		{"the namespace deleted releases every sandbox", sandboxCleanup},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.fn(ctx, t) }) {
			t.Logf("manager log tail:\n%s", managerLogs(ctx))
			out, _ := cl.Kubectl(ctx, "-n", agentSandboxNS, "logs", "deploy/"+agentSandboxDeploy, "--tail=8")
			t.Logf("agent-sandbox controller log tail:\n%s", out)
			out, _ = cl.Kubectl(ctx, "-n", sandboxNS, "get", "sandboxclaims,sandboxes,pods,pvc,events", "-o", "wide")
			t.Logf("%s:\n%s", sandboxNS, out)
			t.Logf("kubelet log tail:\n%s", cl.Tail("kubelet", 20))
			t.FailNow()
		}
	}
}

func installAgentSandbox(ctx context.Context, t *testing.T) {
	// The CRDs are large (their Pod templates): server-side, as their release says.
	if out, err := cl.Kubectl(ctx, "apply", "--server-side", "-f", filepath.Join(cl.RepoRoot, "config", "agent-sandbox", "crds")); err != nil {
		t.Fatalf("agent-sandbox CRDs: %v\n%s", err, out)
	}
	rendered := kubectl(ctx, t, "kustomize", filepath.Join(cl.RepoRoot, "config", "agent-sandbox", "controller"))
	if !strings.Contains(rendered, releasedControllerImage) {
		t.Fatalf("config/agent-sandbox/controller no longer names %s", releasedControllerImage)
	}
	rendered = strings.ReplaceAll(rendered, releasedControllerImage, harness.SandboxControllerImage)
	if out, err := cl.KubectlIn(ctx, rendered, "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatalf("agent-sandbox controller: %v\n%s", err, out)
	}
	if out, err := cl.Kubectl(ctx, "-n", agentSandboxNS, "rollout", "status", "deploy/"+agentSandboxDeploy, "--timeout="+rolloutTimeout.String()); err != nil {
		desc, _ := cl.Kubectl(ctx, "-n", agentSandboxNS, "describe", "pods")
		t.Fatalf("rollout: %v\n%s\n%s", err, out, desc)
	}
	waitAgentSandboxAPI(ctx, t)
	pod := kubectl(ctx, t, "-n", agentSandboxNS, "get", "pods", "-l", "app=agent-sandbox-controller", "-o", "jsonpath={.items[0].metadata.name} {.items[0].spec.containers[0].image}")
	t.Logf("agent-sandbox controller Pod: %s", pod)
}

// waitAgentSandboxAPI waits until agent-sandbox's API answers. The CRDs convert through the
// controller's webhook, whose CA the controller patches into them once it serves: a dry run
// through it answers only then.
func waitAgentSandboxAPI(ctx context.Context, t *testing.T) {
	t.Helper()
	probe := `apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxWarmPool
metadata: {name: probe, namespace: default}
spec: {replicas: 0, sandboxTemplateRef: {name: probe}}
`
	if err := harness.Poll(ctx, rolloutTimeout, "agent-sandbox's API", func() error {
		out, err := cl.KubectlIn(ctx, probe, "create", "--dry-run=server", "-f", "-")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// uninstallAgentSandbox removes what installAgentSandbox installed (the controller, then
// its CRDs), if it is there, so the Helm chart can install its own.
func uninstallAgentSandbox(ctx context.Context, t *testing.T) {
	t.Helper()
	rendered := kubectl(ctx, t, "kustomize", filepath.Join(cl.RepoRoot, "config", "agent-sandbox", "controller"))
	if out, err := cl.KubectlIn(ctx, rendered, "delete", "--ignore-not-found", "--wait", "--timeout="+rolloutTimeout.String(), "-f", "-"); err != nil {
		t.Fatalf("agent-sandbox controller: %v\n%s", err, out)
	}
	kubectl(ctx, t, "delete", "--ignore-not-found", "--wait", "--timeout="+rolloutTimeout.String(), "-f", filepath.Join(cl.RepoRoot, "config", "agent-sandbox", "crds"))
}

// withSandboxes is config/default for image with the manager's --sandboxes and the default
// sandbox image, as docs/tasks/run-tools-in-a-sandbox.md tells an installer to set them.
func withSandboxes(t *testing.T, yaml string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^(\s*)- --leader-elect$`)
	loc := re.FindStringSubmatchIndex(yaml)
	if loc == nil {
		t.Fatal("the install YAML has no manager argument --leader-elect to add --sandboxes beside")
	}
	indent := yaml[loc[2]:loc[3]]
	return yaml[:loc[1]] + "\n" + indent + "- --sandboxes\n" + indent + "- --sandbox-image=" + harness.SandboxRuntimeImage + yaml[loc[1]:]
}

func installWithSandboxes(ctx context.Context, t *testing.T) {
	y := withSandboxes(t, installYAML(t, harness.OperatorImage+":v1"))
	if out, err := cl.KubectlIn(ctx, y, "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	waitAvailable(ctx, t)
	args := kubectl(ctx, t, "-n", operatorNS, "get", "deploy", deployment, "-o", `jsonpath={.spec.template.spec.containers[?(@.name=="manager")].args}`)
	if !strings.Contains(args, "--sandboxes") {
		t.Fatalf("manager args: %s", args)
	}
}

// attachLook is the command the scripted Agent runs on a task "look at the attachments":
// where it runs, and what it finds at the spawn's attachAs path (attachMountPath), each file's
// sha256 computed in the sandbox.
const attachLook = `echo "host=$(hostname)"; cd /workspace/` + attachMountPath + ` && ` +
	`for f in *; do echo "sha256 $f=$(sha256sum < "$f" | cut -d' ' -f1)"; done; sed 's/^/line=/' notes.txt`

// attachMountPath is the spawn's attachAs.mountPath.
const attachMountPath = "inputs/data"

var attachLookJSON = func() string { b, _ := json.Marshal(attachLook); return string(b) }()

// sandboxAgentYAML is the scripted Agent coder, sandboxed, and its two sessions. Its rules
// are its tools: a message starting "true;" is a shell command for exec; "keep ..." writes
// the message to notes/kept.txt; "recall" reads it back (by its absolute path).
func sandboxAgentYAML() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata: {name: coder, namespace: %[1]s}
spec:
  model:
    provider: scripted
    script:
    - match: "^true;"
      toolCalls: [{name: exec, arguments: {command: "{{input}}", timeoutSeconds: 60}}]
      reply: "{{toolResults}}"
    - match: "^keep "
      toolCalls: [{name: write, arguments: {path: notes/kept.txt, content: "{{input}}"}}]
      reply: "{{toolResults}}"
    - match: "^recall$"
      toolCalls: [{name: read, arguments: {path: /workspace/notes/kept.txt}}]
      reply: "{{toolResults}}"
    - match: "^look at the attachments"
      toolCalls: [{name: exec, arguments: {command: %[3]s, timeoutSeconds: 60}}]
      reply: "{{toolResults}}"
    - {match: "^Agent-to-agent announce step", reply: ANNOUNCE_SKIP}
  sandbox:
    enabled: true
    idleSeconds: %[2]d
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata: {name: coder-main, namespace: %[1]s}
spec: {key: "agent:coder:main", agentId: coder, chatType: direct}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata: {name: coder-second, namespace: %[1]s}
spec: {key: "agent:coder:second", agentId: coder, chatType: direct}
`, sandboxNS, sandboxIdle, attachLookJSON)
}

func sandboxedAgent(ctx context.Context, t *testing.T) {
	sandboxPVsNamed(ctx, t, "sandbox-workspace", 3)
	want := ""
	if cl.GVisor() {
		// The node's runsc (hack/cluster-packages.sh), as the RuntimeClass an Agent's sandbox
		// gets by default when the cluster has one named gvisor.
		apply(ctx, t, "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\nhandler: runsc\n")
		want = "gvisor"
	}
	apply(ctx, t, sandboxAgentYAML())
	if err := harness.Poll(ctx, objectTimeout, "the Agent's sandbox status", func() error {
		out, err := cl.Kubectl(ctx, "-n", sandboxNS, "get", "agent", "coder", "-o", "jsonpath={.status.sandbox.template}|{.status.sandbox.runtimeClassName}")
		if err != nil || !strings.HasPrefix(out, "coder-sandbox|") {
			return fmt.Errorf("%q %v", out, err)
		}
		if rc := strings.TrimPrefix(out, "coder-sandbox|"); rc != want {
			t.Fatalf("status.sandbox.runtimeClassName = %q, want %q", rc, want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sandboxRun.runtime = want
	t.Logf("the sandboxes run with RuntimeClass %q (%s)", want, map[bool]string{true: "gVisor: runsc", false: "runc, the node's default"}[want != ""])
}

// sandboxSend sends message into session key of the sandbox namespace and returns the reply
// (the tool results the scripted model echoes back).
func sandboxSend(ctx context.Context, t *testing.T, name, key, message string) string {
	t.Helper()
	msg, _ := json.Marshal(message)
	apply(ctx, t, fmt.Sprintf(`apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata: {name: %s, namespace: %s}
spec: {sessionKey: %q, message: %s, timeoutSeconds: 300}
`, name, sandboxNS, key, msg))
	if out, err := cl.Kubectl(ctx, "-n", sandboxNS, "wait", "--for=condition=Completed", "sessionsend/"+name, "--timeout="+rolloutTimeout.String()); err != nil {
		st, _ := cl.Kubectl(ctx, "-n", sandboxNS, "get", "sessionsend/"+name, "-o", "jsonpath={.status}")
		t.Fatalf("send %s: %v\n%s\nstatus: %s", name, err, out, st)
	}
	got := kubectl(ctx, t, "-n", sandboxNS, "get", "sessionsend/"+name, "-o", "jsonpath={.status.status}|{.status.reply}")
	status, reply, _ := strings.Cut(got, "|")
	if status != "ok" {
		t.Fatalf("send %s: status %q, reply %q", name, status, reply)
	}
	return reply
}

// execOut decodes an exec tool result (the reply) into its stdout, failing on a non-zero exit.
func execOut(t *testing.T, reply string) string {
	t.Helper()
	var r struct {
		ExitCode int    `json:"exitCode"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	}
	if err := json.Unmarshal([]byte(reply), &r); err != nil {
		t.Fatalf("exec result %q: %v", reply, err)
	}
	if r.ExitCode != 0 {
		t.Fatalf("exec exit %d: stdout %q stderr %q", r.ExitCode, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// field is the value of "key=value" in out.
func field(out, key string) string {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `=(.*)$`).FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1])
}

// sandboxPod is the Pod of a session's Sandbox (status.sandbox.sandbox), as agent-sandbox
// names it.
func sandboxPod(ctx context.Context, t *testing.T, session string) (name, ip string) {
	t.Helper()
	var sb string
	if err := harness.Poll(ctx, objectTimeout, "status.sandbox of "+session, func() error {
		out, err := cl.Kubectl(ctx, "-n", sandboxNS, "get", "agentsession", session, "-o", "jsonpath={.status.sandbox.sandbox}")
		if err != nil || out == "" {
			return fmt.Errorf("%q %v", out, err)
		}
		sb = out
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	name = kubectl(ctx, t, "-n", sandboxNS, "get", "sandbox", sb, "-o", `jsonpath={.metadata.annotations.agents\.x-k8s\.io/pod-name}`)
	if name == "" {
		name = sb
	}
	ip = kubectl(ctx, t, "-n", sandboxNS, "get", "pod", name, "-o", "jsonpath={.status.podIP}")
	return name, ip
}

func sandboxExec(ctx context.Context, t *testing.T) {
	sandboxRun.note = "keep this across a suspend"
	if reply := sandboxSend(ctx, t, "keep", "agent:coder:main", sandboxRun.note); !strings.Contains(reply, `"status":"ok"`) {
		t.Fatalf("write: %s", reply)
	}
	out := execOut(t, sandboxSend(ctx, t, "probe", "agent:coder:main",
		`true; echo "host=$(hostname)"; echo "uid=$(id -u)"; echo "pwd=$(pwd)"; `+
			`if test -e /var/run/secrets/kubernetes.io/serviceaccount/token; then echo token=present; else echo token=absent; fi; `+
			`echo "caps=$(grep ^CapEff: /proc/self/status | cut -f2)"; echo "nnp=$(grep ^NoNewPrivs: /proc/self/status | cut -f2)"; `+
			`echo "kernel=$(uname -r)"; cat notes/kept.txt | sed 's/^/note=/'`))
	sandboxRun.pod, sandboxRun.podIP = sandboxPod(ctx, t, "coder-main")
	t.Logf("exec in the sandbox:\n%s", out)
	for key, want := range map[string]string{"host": sandboxRun.pod, "token": "absent", "pwd": "/workspace", "note": sandboxRun.note} {
		if got := field(out, key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if uid := field(out, "uid"); uid == "" || uid == "0" {
		t.Errorf("the command ran as uid %q, want a user who is not root", uid)
	}
	// The kernel the command sees: gVisor's own under runsc, the node's under runc.
	host, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	kernel := field(out, "kernel")
	if gvisor := kernel != strings.TrimSpace(string(host)); gvisor != (sandboxRun.runtime == "gvisor") {
		t.Errorf("the sandbox's kernel %q beside the node's %q: runtime %q", kernel, strings.TrimSpace(string(host)), sandboxRun.runtime)
	}
}

func sandboxHostile(ctx context.Context, t *testing.T) {
	spec := kubectl(ctx, t, "-n", sandboxNS, "get", "pod", sandboxRun.pod, "-o", `jsonpath=`+
		`automount={.spec.automountServiceAccountToken}{"\n"}`+
		`nonroot={.spec.securityContext.runAsNonRoot}{"\n"}`+
		`user={.spec.securityContext.runAsUser}{"\n"}`+
		`seccomp={.spec.containers[0].securityContext.seccompProfile.type}{"\n"}`+
		`escalation={.spec.containers[0].securityContext.allowPrivilegeEscalation}{"\n"}`+
		`drop={.spec.containers[0].securityContext.capabilities.drop}{"\n"}`+
		`runtime={.spec.runtimeClassName}{"\n"}`+
		`image={.spec.containers[0].image}{"\n"}`+
		`mounts={.spec.containers[0].volumeMounts[*].mountPath}{"\n"}`)
	for key, want := range map[string]string{
		"automount": "false", "nonroot": "true", "user": "65532", "seccomp": "RuntimeDefault",
		"escalation": "false", "drop": `["ALL"]`, "runtime": sandboxRun.runtime,
		"image": harness.SandboxRuntimeImage, "mounts": "/workspace",
	} {
		if got := field(spec, key); got != want {
			t.Errorf("sandbox Pod %s = %q, want %q", key, got, want)
		}
	}
	// What the running process has, as the runtime reports it to the process itself (gVisor
	// emulates /proc; under runc these are the kernel's): no capability, no new privileges.
	out := execOut(t, sandboxSend(ctx, t, "caps", "agent:coder:main",
		`true; echo "caps=$(grep ^CapEff: /proc/self/status | cut -f2)"; echo "bnd=$(grep ^CapBnd: /proc/self/status | cut -f2)"; echo "nnp=$(grep ^NoNewPrivs: /proc/self/status | cut -f2)"`))
	if caps := field(out, "caps"); caps != "0000000000000000" {
		t.Errorf("effective capabilities %q, want none", caps)
	}
	if nnp := field(out, "nnp"); nnp != "" && nnp != "1" {
		t.Errorf("NoNewPrivs %q, want 1", nnp)
	}
	// The NetworkPolicy agent-sandbox made from the template: no ingress rule, egress to DNS.
	np := kubectl(ctx, t, "-n", sandboxNS, "get", "networkpolicies", "-o", "json")
	var list struct {
		Items []struct {
			Spec struct {
				PolicyTypes []string          `json:"policyTypes"`
				Ingress     []json.RawMessage `json:"ingress"`
				Egress      []struct {
					Ports []struct {
						Port any `json:"port"`
					} `json:"ports"`
				} `json:"egress"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(np), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("want the template's one NetworkPolicy, got %d:\n%s", len(list.Items), np)
	}
	p := list.Items[0].Spec
	if len(p.Ingress) != 0 || !contains(p.PolicyTypes, "Ingress") || !contains(p.PolicyTypes, "Egress") ||
		len(p.Egress) != 1 || len(p.Egress[0].Ports) != 2 || fmt.Sprint(p.Egress[0].Ports[0].Port) != "53" {
		t.Errorf("NetworkPolicy: %+v, want no ingress and egress to DNS only", p)
	}
	t.Logf("sandbox Pod %s: %s; process: %s", sandboxRun.pod, strings.ReplaceAll(spec, "\n", " "), strings.ReplaceAll(out, "\n", " "))
}

func sandboxCrossSession(ctx context.Context, t *testing.T) {
	// sandboxd binds its Pod's loopback: from another session's sandbox its ports are shut
	// whether or not the network enforces the NetworkPolicy (this one does not).
	// probe says whether a port takes a connection (busybox's nc: connected, it reads until
	// the server closes on its end of input); refused, or nothing within 5 s, is shut.
	const probe = `probe() { if timeout 15 nc -w 5 "$1" "$2" </dev/null >/dev/null 2>&1; then echo open; else echo shut; fi; }; `
	out := execOut(t, sandboxSend(ctx, t, "other", "agent:coder:second", fmt.Sprintf(
		`true; `+probe+`echo "host=$(hostname)"; if test -e notes/kept.txt; then echo note=present; else echo note=absent; fi; `+
			`echo "rest=$(probe %[1]s 8080)"; echo "grpc=$(probe %[1]s 9090)"; `+
			// The control: the same probe finds its own sandboxd on its own loopback.
			`echo "own=$(probe 127.0.0.1 8080)"`, sandboxRun.podIP)))
	t.Logf("from the second session's sandbox:\n%s", out)
	second, _ := sandboxPod(ctx, t, "coder-second")
	for key, want := range map[string]string{"host": second, "note": "absent", "rest": "shut", "grpc": "shut", "own": "open"} {
		if got := field(out, key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if second == sandboxRun.pod {
		t.Errorf("two sessions share the sandbox Pod %s", second)
	}
}

func sandboxNoReadRight(ctx context.Context, t *testing.T) {
	// Two users: one with no rights in the namespace, one who may read its sessions (the
	// view role) but, like every user but the manager, has no right on its Pods.
	apply(ctx, t, fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata: {name: outsider, namespace: %[1]s}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader-view, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: agent-session-operator-agent-sessions-view}
subjects: [{kind: ServiceAccount, name: reader, namespace: %[1]s}]
`, sandboxNS))
	as := func(user string, stdin string, args ...string) (string, error) {
		return cl.KubectlIn(ctx, stdin, append([]string{"--as=system:serviceaccount:" + sandboxNS + ":" + user, "-n", sandboxNS}, args...)...)
	}
	msg, _ := json.Marshal("true; cat notes/kept.txt")
	sendYAML := fmt.Sprintf("apiVersion: sessions.agents.dev/v1alpha1\nkind: SessionSend\nmetadata: {name: intruder, namespace: %s}\nspec: {sessionKey: \"agent:coder:main\", message: %s}\n", sandboxNS, msg)
	for _, c := range []struct {
		user, door, stdin string
		args              []string
	}{
		{"outsider", "a send into the session", sendYAML, []string{"create", "-f", "-"}},
		{"outsider", "kubectl exec in the sandbox Pod", "", []string{"exec", sandboxRun.pod, "--", "id"}},
		{"outsider", "a port-forward to sandboxd", "", []string{"port-forward", "pod/" + sandboxRun.pod, "18095:8080"}},
		{"outsider", "the Sandbox object", "", []string{"get", "sandboxes"}},
		{"reader", "kubectl exec in the sandbox Pod", "", []string{"exec", sandboxRun.pod, "--", "id"}},
		{"reader", "a port-forward to sandboxd", "", []string{"port-forward", "pod/" + sandboxRun.pod, "18096:9090"}},
	} {
		out, err := as(c.user, c.stdin, c.args...)
		if err == nil || !strings.Contains(strings.ToLower(out), "forbidden") {
			t.Errorf("%s through %s: %v %q, want forbidden", c.user, c.door, err, out)
			continue
		}
		t.Logf("%s through %s: %s", c.user, c.door, firstLine(out))
	}
	if out, err := cl.Kubectl(ctx, "-n", sandboxNS, "get", "sessionsend", "intruder"); err == nil {
		t.Errorf("the outsider's send exists: %s", out)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func sandboxSuspendResume(ctx context.Context, t *testing.T) {
	if err := harness.Poll(ctx, rolloutTimeout, "the idle sandbox Suspended", func() error {
		out, err := cl.Kubectl(ctx, "-n", sandboxNS, "get", "agentsession", "coder-main", "-o", "jsonpath={.status.sandbox.phase}")
		if err != nil || out != "Suspended" {
			return fmt.Errorf("phase %q %v", out, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := harness.Poll(ctx, rolloutTimeout, "the suspended sandbox's Pod gone", func() error {
		out, err := cl.Kubectl(ctx, "-n", sandboxNS, "get", "pod", sandboxRun.pod, "--ignore-not-found", "-o", "name")
		if err != nil || out != "" {
			return fmt.Errorf("pod %q %v", out, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mode := kubectl(ctx, t, "-n", sandboxNS, "get", "sandboxes", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.operatingMode} {end}`)
	t.Logf("suspended after %ds idle, Pod %s gone; Sandboxes: %s", sandboxIdle, sandboxRun.pod, mode)

	reply := sandboxSend(ctx, t, "recall", "agent:coder:main", "recall")
	var r struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal([]byte(reply), &r); err != nil || r.Content != sandboxRun.note {
		t.Fatalf("read after the resume: %q (%v), want the content %q", reply, err, sandboxRun.note)
	}
	phase := kubectl(ctx, t, "-n", sandboxNS, "get", "agentsession", "coder-main", "-o", "jsonpath={.status.sandbox.phase} {.status.sandbox.runtimeClassName}")
	pod, _ := sandboxPod(ctx, t, "coder-main")
	if !strings.HasPrefix(phase, "Ready") {
		t.Errorf("after the resume: %q, want Ready", phase)
	}
	var events string
	if err := harness.Poll(ctx, objectTimeout, "the session's sandbox Events", func() error {
		events = kubectl(ctx, t, "-n", sandboxNS, "get", "events", "--field-selector", "involvedObject.name=coder-main", "-o", "jsonpath={range .items[*]}{.reason} {end}")
		for _, want := range []string{"SandboxClaimed", "SandboxReady", "SandboxSuspended", "SandboxResumed"} {
			if !strings.Contains(events, want) {
				return fmt.Errorf("Events %q lack %s", events, want)
			}
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	t.Logf("resumed in Pod %s (%s), read back %q; Events: %s", pod, phase, r.Content, events)
}

// sandboxSpawnAttachments spawns a run into the sandboxed Agent with two attachments (one
// text, one binary) and attachAs.mountPath: the child's tool call, run in the child's own
// sandbox Pod, finds both files there with the sha256 the run's receipts give.
func sandboxSpawnAttachments(ctx context.Context, t *testing.T) {
	notes := "attached for the child\nsecond line"
	bin := []byte{0, 1, 2, 0xfe, 0xff, '\n', 'x'}
	want := map[string]string{"notes.txt": sha256Hex([]byte(notes)), "data.bin": sha256Hex(bin)}
	notesJSON, _ := json.Marshal(notes)
	apply(ctx, t, fmt.Sprintf(`apiVersion: sessions.agents.dev/v1alpha1
kind: SubagentRun
metadata: {name: attached, namespace: %s}
spec:
  agentId: coder
  task: look at the attachments
  sandbox: require
  attachAs: {mountPath: %s}
  attachments:
  - {name: notes.txt, content: %s, mimeType: text/plain}
  - {name: data.bin, encoding: base64, content: %q}
`, sandboxNS, attachMountPath, notesJSON, base64.StdEncoding.EncodeToString(bin)))
	if out, err := cl.Kubectl(ctx, "-n", sandboxNS, "wait", "--for=jsonpath={.status.phase}=Succeeded", "subagentrun/attached", "--timeout="+rolloutTimeout.String()); err != nil {
		st, _ := cl.Kubectl(ctx, "-n", sandboxNS, "get", "subagentrun/attached", "-o", "jsonpath={.status}")
		t.Fatalf("run: %v\n%s\nstatus: %s", err, out, st)
	}
	var run struct {
		Status struct {
			ChildSessionKey string `json:"childSessionKey"`
			Result          string `json:"result"`
			AttachmentsDir  string `json:"attachmentsDir"`
			Attachments     []struct {
				Name   string `json:"name"`
				SHA256 string `json:"sha256"`
			} `json:"attachments"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(kubectl(ctx, t, "-n", sandboxNS, "get", "subagentrun/attached", "-o", "json")), &run); err != nil {
		t.Fatal(err)
	}
	st := run.Status
	if st.AttachmentsDir != "/workspace/"+attachMountPath {
		t.Errorf("status.attachmentsDir = %q, want /workspace/%s", st.AttachmentsDir, attachMountPath)
	}
	if len(st.Attachments) != len(want) {
		t.Errorf("receipts %+v, want one per attachment", st.Attachments)
	}
	for _, r := range st.Attachments {
		if r.SHA256 != want[r.Name] {
			t.Errorf("receipt of %s: sha256 %s, want %s", r.Name, r.SHA256, want[r.Name])
		}
	}
	out := execOut(t, st.Result)
	t.Logf("the child's exec in its sandbox:\n%s", out)
	for name, sum := range want {
		if got := field(out, "sha256 "+name); got != sum {
			t.Errorf("in the sandbox at %s: sha256 of %s = %q, want %q", attachMountPath, name, got, sum)
		}
	}
	if got := field(out, "sha256 "+policy.AttachmentManifestName); got == "" {
		t.Errorf("no %s beside the attachments:\n%s", policy.AttachmentManifestName, out)
	}
	if lines := regexp.MustCompile(`(?m)^line=(.*)$`).FindAllStringSubmatch(out, -1); len(lines) != 2 || lines[0][1]+"\n"+lines[1][1] != notes {
		t.Errorf("notes.txt read in the sandbox: %q, want %q", lines, notes)
	}
	// The command ran in the child's own sandbox Pod, not the requester's nor the first
	// session's.
	child := kubectl(ctx, t, "-n", sandboxNS, "get", "agentsessions", "-o",
		fmt.Sprintf(`jsonpath={range .items[?(@.spec.key==%q)]}{.metadata.name}{end}`, st.ChildSessionKey))
	pod, _ := sandboxPod(ctx, t, child)
	if host := field(out, "host"); host != pod || host == sandboxRun.pod {
		t.Errorf("the child's exec ran on %q, want its own sandbox Pod %s", host, pod)
	}
	t.Logf("child %s (%s): attachments at /workspace/%s in Pod %s, receipts %+v", st.ChildSessionKey, child, attachMountPath, pod, st.Attachments)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func sandboxCleanup(ctx context.Context, t *testing.T) {
	kubectl(ctx, t, "delete", "namespace", sandboxNS, "--wait", "--timeout="+rolloutTimeout.String())
	if out := kubectl(ctx, t, "get", "pods", "-A", "-l", "sessions.agents.dev/agent=coder", "-o", "name"); out != "" {
		t.Errorf("sandbox Pods left: %s", out)
	}
	// The workspace volumes go too: a free one must not be bound by the next test's claim
	// (the transcripts' own volume is the one that claim is meant for).
	kubectl(ctx, t, "delete", "pv", "--ignore-not-found", "--wait=false", "sandbox-workspace-0", "sandbox-workspace-1", "sandbox-workspace-2")
}
