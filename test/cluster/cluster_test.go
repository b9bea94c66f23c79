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

// Package cluster runs the operator as real Pods under a real kubelet on this machine and
// installs it the way a user would (make test-cluster; root, Linux). See harness for the
// cluster and docs/operations/install.md for what the install steps mirror.
package cluster

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/test/cluster/harness"
)

const (
	// Namespace and names as config/default and the Helm chart create them.
	operatorNS = "agent-session-operator-system"
	deployment = "agent-session-operator-controller-manager"
	historySvc = "agent-session-operator-history"
	certSecret = "agent-session-operator-webhook-server-cert"
	// historyAudience is the audience the history API asks of tokens.
	historyAudience = "agent-sessions"
	metricsSvc      = "agent-session-operator-controller-manager-metrics-service"
	podSelector     = "control-plane=controller-manager"

	// Bounds of the waits, generous for a loaded 2-core machine.
	rolloutTimeout = 6 * time.Minute
	objectTimeout  = 3 * time.Minute
	innerTimeout   = 45 * time.Minute
)

var cl *harness.Cluster

func TestMain(m *testing.M) {
	if !harness.Inner() {
		os.Exit(outer())
	}
	cfg, err := harness.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	c, err := harness.Start(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster test: starting the cluster:", err)
		os.Exit(1)
	}
	fmt.Printf("cluster test: node Ready %s after start\n", time.Since(start).Round(time.Second))
	cl = c
	code := m.Run()
	c.Stop()
	os.Exit(code)
}

// outer prepares the host, runs the tests inside the cluster's namespace and tears it all
// down whatever happened.
func outer() int {
	repo, err := filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	start := time.Now()
	cfg, err := harness.Prepare(repo)
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster test: preparing the host:", err)
	} else {
		fmt.Printf("cluster test: host prepared in %s (binaries, images, namespace %s)\n", time.Since(start).Round(time.Second), cfg.ID)
		code = cfg.RunInner(innerTimeout)
	}
	for _, err := range cfg.Teardown() {
		fmt.Fprintln(os.Stderr, "cluster test: teardown:", err)
		code = 1
	}
	fmt.Printf("cluster test: done in %s, torn down\n", time.Since(start).Round(time.Second))
	return code
}

// TestOperatorInCluster is one user's story, in order: each step needs the ones before.
func TestOperatorInCluster(t *testing.T) {
	ctx := context.Background()
	steps := []struct {
		name string
		fn   func(context.Context, *testing.T)
	}{
		{"install config/default with kustomize", installKustomize},
		{"both containers non-root on a read-only root filesystem", nonRootReadOnly},
		{"a denied send is refused at kubectl apply through the webhook Service", deniedSend},
		{"a send and a spawn complete", sendAndSpawn},
		{"history API through kubectl port-forward with and without a token", historyAPI},
		{"metrics through the metrics Service with an RBAC'd token", metrics},
		{"a send survives its Pod being deleted, every message once", podDeletedMidSend},
		{"an upgrade to a new image tag keeps sessions and transcripts", upgrade},
		{"uninstall, then install the Helm chart", helmInstall},
		{"two shards: sends, the front, a loop between shards, a shard's Pod deleted", twoShards},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.fn(ctx, t) }) {
			t.Logf("manager log tail:\n%s", managerLogs(ctx))
			t.FailNow()
		}
	}
}

func kubectl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := cl.Kubectl(ctx, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func apply(ctx context.Context, t *testing.T, yaml string) {
	t.Helper()
	if out, err := cl.Apply(ctx, yaml); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func managerLogs(ctx context.Context) string {
	out, _ := cl.Kubectl(ctx, "-n", operatorNS, "logs", "-l", podSelector, "--all-containers", "--prefix", "--tail=40")
	return out
}

// installYAML renders config/default for image with the script make deploy uses.
func installYAML(t *testing.T, image string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(cl.RepoRoot, "hack", "install-yaml.sh"), image)
	cmd.Env = append(os.Environ(), "KUBECTL="+cl.KubectlBin())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/install-yaml.sh: %v", err)
	}
	return string(out)
}

func waitAvailable(ctx context.Context, t *testing.T) {
	t.Helper()
	out, err := cl.Kubectl(ctx, "-n", operatorNS, "rollout", "status", "deploy/"+deployment, "--timeout="+rolloutTimeout.String())
	if err != nil {
		desc, _ := cl.Kubectl(ctx, "-n", operatorNS, "describe", "pods", "-l", podSelector)
		t.Fatalf("rollout: %v\n%s\n%s", err, out, desc)
	}
	kubectl(ctx, t, "-n", operatorNS, "wait", "deploy/"+deployment, "--for=condition=Available", "--timeout="+rolloutTimeout.String())
	waitWebhookService(ctx, t)
}

// waitWebhookService waits until an admission request through the webhook Service is
// answered. A Ready Pod is serving, but the Service routes to it only once the endpoints
// reach kube-proxy; until then the API server's call is refused (a user's apply right after
// `kubectl wait` can meet the same second). A server-side dry run passes every webhook and
// stores nothing.
func waitWebhookService(ctx context.Context, t *testing.T) {
	t.Helper()
	probe := `apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: webhook-probe
  namespace: default
spec:
  model: {provider: scripted}
`
	var out string
	var err error
	for deadline := time.Now().Add(rolloutTimeout); time.Now().Before(deadline); time.Sleep(time.Second) {
		if out, err = cl.KubectlIn(ctx, probe, "create", "--dry-run=server", "-f", "-"); err == nil {
			return
		}
	}
	t.Fatalf("the webhook never answered through its Service: %v\n%s", err, out)
}

func installKustomize(ctx context.Context, t *testing.T) {
	y := installYAML(t, harness.OperatorImage+":v1")
	out, err := cl.KubectlIn(ctx, y, "apply", "--server-side", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	waitAvailable(ctx, t)
}

// nonRootReadOnly looks at the running processes themselves: their user id and the mount
// flags of their root filesystem, as the kernel reports them.
func nonRootReadOnly(ctx context.Context, t *testing.T) {
	pod := kubectl(ctx, t, "-n", operatorNS, "get", "pods", "-l", podSelector, "-o", "jsonpath={.items[0].metadata.name}")
	ids := kubectl(ctx, t, "-n", operatorNS, "get", "pod", pod, "-o", `jsonpath={range .status.containerStatuses[*]}{.name}={.containerID}{"\n"}{end}`)
	tasks, err := cl.Ctr("tasks", "ls")
	if err != nil {
		t.Fatal(err)
	}
	pids := map[string]string{} // container id -> pid
	for _, line := range strings.Split(tasks, "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 2 {
			pids[f[0]] = f[1]
		}
	}
	seen := 0
	for _, line := range strings.Split(ids, "\n") {
		name, id, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		seen++
		pid := pids[strings.TrimPrefix(id, "containerd://")]
		if pid == "" {
			t.Fatalf("container %s (%s) has no task:\n%s", name, id, tasks)
		}
		status, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "Uid:") && strings.Join(strings.Fields(l)[1:], " ") != "65532 65532 65532 65532" {
				t.Errorf("container %s runs as %q, want uid 65532", name, l)
			}
		}
		mounts, err := os.ReadFile("/proc/" + pid + "/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		rootRO := false
		for _, l := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(l); len(f) > 5 && f[4] == "/" {
				rootRO = strings.HasPrefix(f[5], "ro")
			}
		}
		if !rootRO {
			t.Errorf("container %s: root filesystem is writable", name)
		}
		t.Logf("container %s: pid %s, uid 65532, read-only root", name, pid)
	}
	if seen != 2 {
		t.Fatalf("want the manager and transcript-store containers, got:\n%s", ids)
	}
}

func sample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cl.RepoRoot, "config", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func applySamples(ctx context.Context, t *testing.T) {
	for _, f := range []string{"sessions_v1alpha1_agent.yaml", "sessions_v1alpha1_sessionpolicy.yaml", "sessions_v1alpha1_agentsession.yaml"} {
		apply(ctx, t, sample(t, f))
	}
}

func deniedSend(ctx context.Context, t *testing.T) {
	applySamples(ctx, t)
	out, err := cl.Apply(ctx, `apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata:
  name: cluster-denied
spec:
  sessionKey: agent:main:discord:group:general
  message: hello group
`)
	if err == nil {
		t.Fatalf("a send into a denied Discord group was admitted:\n%s", out)
	}
	// The API server names the webhook that refused it: the call went through its Service.
	if !strings.Contains(out, `admission webhook "vsessionsend.sessions.agents.dev" denied the request`) || !strings.Contains(out, "denied") {
		t.Fatalf("want the webhook's denial, got:\n%s", out)
	}
	t.Logf("refused: %s", out)
}

func sendAndSpawn(ctx context.Context, t *testing.T) {
	apply(ctx, t, sample(t, "sessions_v1alpha1_sessionsend.yaml"))
	apply(ctx, t, sample(t, "sessions_v1alpha1_subagentrun.yaml"))
	kubectl(ctx, t, "wait", "--for=condition=Completed", "sessionsend/ping-research", "subagentrun/research-llamas", "--timeout="+objectTimeout.String())
	// The sample research agent has no rule for "ping": its scripted model echoes.
	if got := kubectl(ctx, t, "get", "sessionsend/ping-research", "-o", "jsonpath={.status.status} {.status.reply}"); got != "ok echo: ping" {
		t.Errorf("send: %q, want ok echo: ping", got)
	}
	if got := kubectl(ctx, t, "get", "subagentrun/research-llamas", "-o", "jsonpath={.status.phase}"); got != "Succeeded" {
		t.Errorf("spawn: phase %q, want Succeeded", got)
	}
}

// portForward forwards a local port to the history Service and returns its base URL.
func portForward(ctx context.Context, t *testing.T, local int) string {
	t.Helper()
	pctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(pctx, cl.KubectlBin(), "--kubeconfig", cl.Kubeconfig, "-n", operatorNS,
		"port-forward", "svc/"+historySvc, fmt.Sprintf("%d:8090", local))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := false
		for sc.Scan() {
			if !once && strings.HasPrefix(sc.Text(), "Forwarding from") {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(objectTimeout):
		t.Fatal("kubectl port-forward did not start")
	}
	return fmt.Sprintf("127.0.0.1:%d", local)
}

// historyGet reads a session's history through addr (a port-forward of the history
// Service) over HTTPS, verifying the server by the history Service's name against the CA of
// the operator's self-signed certificate Secret, as an in-cluster client would.
func historyGet(ctx context.Context, t *testing.T, addr, key, token string) (int, []byte, error) {
	return historyGetIn(ctx, t, addr, "default", key, token)
}

// historyGetIn is historyGet of a session in namespace.
func historyGetIn(ctx context.Context, t *testing.T, addr, namespace, key, token string) (int, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://%s/sessions/%s/history?namespace=%s&limit=200", addr, key, namespace), nil)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: historyTLS(ctx, t)}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// historyTLS trusts only the operator's CA and expects the history Service's DNS name.
func historyTLS(ctx context.Context, t *testing.T) *tls.Config {
	t.Helper()
	ca := kubectl(ctx, t, "-n", operatorNS, "get", "secret", certSecret, "-o", `jsonpath={.data.ca\.crt}`)
	pem, err := base64.StdEncoding.DecodeString(ca)
	if err != nil {
		t.Fatalf("ca.crt of %s: %v", certSecret, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("ca.crt of %s holds no certificate", certSecret)
	}
	return &tls.Config{RootCAs: pool, ServerName: historySvc + "." + operatorNS + ".svc", MinVersion: tls.VersionTLS12}
}

// serviceAccountToken creates a ServiceAccount in default, optionally bound to role, and
// returns a token for it (for the API server, or for the audiences given).
func serviceAccountToken(ctx context.Context, t *testing.T, name, clusterRole string, audience ...string) string {
	t.Helper()
	y := fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: %s, namespace: default}\n", name)
	if clusterRole != "" {
		y += fmt.Sprintf(`---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: cluster-test-%s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %s}
subjects: [{kind: ServiceAccount, name: %s, namespace: default}]
`, name, clusterRole, name)
	}
	apply(ctx, t, y)
	args := []string{"-n", "default", "create", "token", name, "--duration=1h"}
	for _, a := range audience {
		args = append(args, "--audience="+a)
	}
	return kubectl(ctx, t, args...)
}

type historyPage struct {
	Messages []struct {
		Seq     int64 `json:"seq"`
		Message struct {
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"message"`
	} `json:"messages"`
}

// counts is how often each "role: text" appears in the page.
func (p historyPage) counts() map[string]int {
	counts := map[string]int{}
	for _, m := range p.Messages {
		for _, c := range m.Message.Content {
			counts[m.Message.Role+": "+c.Text]++
		}
	}
	return counts
}

func readHistory(ctx context.Context, t *testing.T, addr, key, token string) historyPage {
	return readHistoryIn(ctx, t, addr, "default", key, token)
}

func readHistoryIn(ctx context.Context, t *testing.T, addr, namespace, key, token string) historyPage {
	t.Helper()
	var page historyPage
	err := harness.Poll(ctx, objectTimeout, "history of "+key, func() error {
		code, body, err := historyGetIn(ctx, t, addr, namespace, key, token)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("%d: %s", code, body)
		}
		return json.Unmarshal(body, &page)
	})
	if err != nil {
		t.Fatal(err)
	}
	return page
}

func historyAPI(ctx context.Context, t *testing.T) {
	reader := serviceAccountToken(ctx, t, "history-reader", "agent-session-operator-agent-sessions-view", historyAudience)
	addr := portForward(ctx, t, 18090)
	page := readHistory(ctx, t, addr, "agent:research:main", reader)
	if len(page.Messages) == 0 {
		t.Fatalf("history of agent:research:main is empty after the ping")
	}
	for _, c := range []struct {
		name  string
		token string
		want  int
	}{
		{"without a token", "", http.StatusUnauthorized},
		// A token for the API server cannot be replayed to the history API.
		{"with the API server's audience", serviceAccountToken(ctx, t, "history-reader", "agent-session-operator-agent-sessions-view"), http.StatusUnauthorized},
		{"without RBAC", serviceAccountToken(ctx, t, "history-outsider", "", historyAudience), http.StatusForbidden},
	} {
		code, body, err := historyGet(ctx, t, addr, "agent:research:main", c.token)
		if err != nil {
			t.Fatal(err)
		}
		if code != c.want {
			t.Fatalf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
	}
	t.Logf("with a token: 200, %d messages; without: 401; API server audience: 401; no RBAC: 403", len(page.Messages))
}

func metrics(ctx context.Context, t *testing.T) {
	ip := kubectl(ctx, t, "-n", operatorNS, "get", "svc", metricsSvc, "-o", "jsonpath={.spec.clusterIP}")
	url := "https://" + ip + ":8443/metrics"
	get := func(token string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // #nosec G402 -- self-signed metrics certificate
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	scraper := serviceAccountToken(ctx, t, "metrics-scraper", "agent-session-operator-metrics-reader")
	outsider := serviceAccountToken(ctx, t, "metrics-outsider", "")
	var body string
	err := harness.Poll(ctx, objectTimeout, "metrics with a token", func() error {
		code, b, err := get(scraper)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("%d: %s", code, b)
		}
		body = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "controller_runtime_reconcile_total") {
		t.Errorf("metrics lack controller_runtime_reconcile_total")
	}
	if code, b, err := get(outsider); err != nil || code != http.StatusForbidden {
		t.Errorf("a token without the role: %d %v %s, want 403", code, err, b)
	}
	if code, b, err := get(""); err != nil || code != http.StatusUnauthorized {
		t.Errorf("no token: %d %v %s, want 401", code, err, b)
	}
}

// podDeletedMidSend deletes the manager's Pod while a slow model answers a send; the
// Deployment's next Pod mounts the same volume and finishes the send. The send is
// fire-and-forget so that its status shows the run started (a timed send writes nothing
// until its reply).
func podDeletedMidSend(ctx context.Context, t *testing.T) {
	apply(ctx, t, slowAgentYAML("default", "slow"))
	before := kubectl(ctx, t, "-n", operatorNS, "get", "pods", "-l", podSelector, "-o", "jsonpath={.items[0].metadata.name}")
	apply(ctx, t, `apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata: {name: slow-send, namespace: default}
spec: {sessionKey: "agent:slow:main", message: "slow please", timeoutSeconds: 0}
`)
	waitRunning(ctx, t, "default", "slow-send")
	kubectl(ctx, t, "-n", operatorNS, "delete", "pod", before, "--wait=false")
	after := readyPod(ctx, t, func(name, _ string) bool { return name != before })
	kubectl(ctx, t, "wait", "--for=condition=Completed", "sessionsend/slow-send", "--timeout="+objectTimeout.String())
	// A fire-and-forget send stays accepted (ok would do too); its reply is recorded.
	if got := kubectl(ctx, t, "get", "sessionsend/slow-send", "-o", "jsonpath={.status.status} {.status.reply}"); got != "accepted done slowly" && got != "ok done slowly" {
		t.Errorf("send after the Pod's deletion: %q, want accepted done slowly", got)
	}
	reader := serviceAccountToken(ctx, t, "history-reader", "agent-session-operator-agent-sessions-view", historyAudience)
	page := readHistory(ctx, t, portForward(ctx, t, 18091), "agent:slow:main", reader)
	counts := page.counts()
	for _, want := range []string{"user: slow please", "assistant: done slowly"} {
		if counts[want] != 1 {
			t.Errorf("%q appears %d times in the transcript, want once; transcript: %v", want, counts[want], counts)
		}
	}
	t.Logf("Pod %s deleted mid-send, %s finished it; transcript %v", before, after, counts)
}

// slowAgentYAML is an Agent named agent in namespace whose scripted model answers "slow..."
// after 30s (and echoes anything else), and its session agent:<agent>:main.
func slowAgentYAML(namespace, agent string) string {
	return fmt.Sprintf(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  model:
    provider: scripted
    script:
    - {match: "^slow", delay: 30s, reply: "done slowly"}
    - {match: "^Agent-to-agent announce step", reply: ANNOUNCE_SKIP}
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata: {name: %[2]s-main, namespace: %[1]s}
spec: {key: "agent:%[2]s:main", agentId: %[2]s, chatType: direct}
`, namespace, agent)
}

// waitRunning waits until a send's run has started.
func waitRunning(ctx context.Context, t *testing.T, namespace, name string) {
	t.Helper()
	if err := harness.Poll(ctx, objectTimeout, "send "+name+" running", func() error {
		out, err := cl.Kubectl(ctx, "-n", namespace, "get", "sessionsend/"+name, "-o", "jsonpath={.status.phase}")
		if err != nil || out != "Running" {
			return fmt.Errorf("phase %q %v", out, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// readyPod waits for the operator's Pod that is not being deleted, has both containers ready
// and passes ok (given its name and its containers' images); it returns its name.
func readyPod(ctx context.Context, t *testing.T, ok func(name, images string) bool) string {
	t.Helper()
	var name string
	err := harness.Poll(ctx, rolloutTimeout, "a new ready operator Pod", func() error {
		out, err := cl.Kubectl(ctx, "-n", operatorNS, "get", "pods", "-l", podSelector, "-o",
			`jsonpath={range .items[*]}{.metadata.name}|{.metadata.deletionTimestamp}|{.status.containerStatuses[*].ready}|{.spec.containers[*].image}{"\n"}{end}`)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(out, "\n") {
			f := strings.Split(line, "|")
			if len(f) == 4 && f[1] == "" && f[2] == "true true" && ok(f[0], f[3]) {
				name = f[0]
				return nil
			}
		}
		return fmt.Errorf("pods: %s", out)
	})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// sessionState is every session's key and message count, from the API and the history API.
func sessionState(ctx context.Context, t *testing.T, port int) map[string]int {
	t.Helper()
	keys := kubectl(ctx, t, "get", "agentsessions", "-o", `jsonpath={range .items[*]}{.spec.key}{"\n"}{end}`)
	reader := serviceAccountToken(ctx, t, "history-reader", "agent-session-operator-agent-sessions-view", historyAudience)
	addr := portForward(ctx, t, port)
	state := map[string]int{}
	for _, k := range strings.Fields(keys) {
		code, body, err := historyGet(ctx, t, addr, k, reader)
		if err != nil {
			t.Fatal(err)
		}
		switch code {
		case http.StatusOK:
			var p historyPage
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			state[k] = len(p.Messages)
		case http.StatusNotFound: // a session nobody wrote to yet has no transcript
			state[k] = 0
		default:
			t.Fatalf("history of %s: %d %s", k, code, body)
		}
	}
	return state
}

func upgrade(ctx context.Context, t *testing.T) {
	before := sessionState(ctx, t, 18092)
	if err := cl.ImportImage("v2"); err != nil {
		t.Fatal(err)
	}
	out, err := cl.KubectlIn(ctx, installYAML(t, harness.OperatorImage+":v2"), "apply", "--server-side", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	waitAvailable(ctx, t)
	v2 := harness.OperatorImage + ":v2"
	readyPod(ctx, t, func(_, images string) bool { return images == v2+" "+v2 })
	after := sessionState(ctx, t, 18093)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("sessions and transcripts changed across the upgrade:\nbefore %v\nafter  %v", before, after)
	}
	t.Logf("upgraded to v2; %d sessions, transcripts unchanged: %v", len(after), after)
}
