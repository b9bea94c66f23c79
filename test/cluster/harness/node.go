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

package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Cluster is the running one-node cluster, seen from the inner run.
type Cluster struct {
	Config
	// Kubeconfig is the admin's (system:masters).
	Kubeconfig string
	procs      []*exec.Cmd
}

// Start brings the cluster up: control plane, containerd with the test's images, kube-proxy
// and the kubelet; it returns once the node is Ready and the local volume exists. Every wait
// is bounded by ctx.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	c := &Cluster{Config: cfg, Kubeconfig: cfg.path("pki", "admin.kubeconfig")}
	for _, d := range []string{"logs", "logs/runsc", "etcd", "containerd", "kubelet", "cni", "pv"} {
		if err := os.MkdirAll(c.path(d), 0o700); err != nil {
			return c, err
		}
	}
	if err := writePKI(c.path("pki")); err != nil {
		return c, err
	}
	if err := c.writeConfigs(); err != nil {
		return c, err
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"etcd", c.startEtcd},
		{"kube-apiserver", c.startAPIServer},
		{"kube-controller-manager", c.startControllerManager},
		{"kube-scheduler", c.startScheduler},
		{"containerd", c.startContainerd},
		{"images", c.importImages},
		{"kube-proxy", c.startProxy},
		{"cluster DNS", c.startDNS},
		{"kubelet", c.startKubelet},
		{"storage", c.createStorage},
	}
	for _, s := range steps {
		if err := s.fn(ctx); err != nil {
			return c, fmt.Errorf("%s: %w\n--- %s log ---\n%s", s.name, err, s.name, c.Tail(s.name, 30))
		}
	}
	return c, nil
}

// Stop ends the cluster's processes, newest first; the outer run's teardown kills whatever
// they leave behind (containerd's shims and the Pods' processes).
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i].Process
		_ = p.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _, _ = c.procs[i].Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Kill()
		}
	}
}

// start runs a component in the background, its output in logs/<name>.log.
func (c *Cluster) start(name, bin string, args ...string) error {
	f, err := os.Create(c.path("logs", name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = c.WorkDir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	f.Close()
	c.procs = append(c.procs, cmd)
	return nil
}

func (c *Cluster) k8s(bin string) string { return filepath.Join(c.K8sBin, bin) }

// Poll calls fn every half second until it succeeds, ctx ends or timeout passes.
func Poll(ctx context.Context, timeout time.Duration, what string, fn func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = fn(); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	err := c.start("etcd", c.k8s("etcd"), "--data-dir="+c.path("etcd"),
		"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=default=http://127.0.0.1:2380", "--unsafe-no-fsync=true", "--log-level=warn")
	if err != nil {
		return err
	}
	return Poll(ctx, 60*time.Second, "etcd", func() error { return httpOK(http.DefaultClient, "http://127.0.0.1:2379/health", "") })
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	p := func(f string) string { return c.path("pki", f) }
	err := c.start("kube-apiserver", c.k8s("kube-apiserver"),
		"--etcd-servers=http://127.0.0.1:2379", "--bind-address=0.0.0.0", "--secure-port=6443",
		"--advertise-address="+NodeIP, "--service-cluster-ip-range="+ServiceCIDR,
		"--tls-cert-file="+p("apiserver.crt"), "--tls-private-key-file="+p("apiserver.key"),
		"--client-ca-file="+p("ca.crt"), "--token-auth-file="+p("tokens.csv"),
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p("sa.pub"), "--service-account-signing-key-file="+p("sa.key"),
		"--kubelet-client-certificate="+p("apiserver-kubelet-client.crt"), "--kubelet-client-key="+p("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP", "--cert-dir="+c.path("pki", "apiserver-generated"),
		"--profiling=false", "--v=1")
	if err != nil {
		return err
	}
	client, err := c.adminHTTP()
	if err != nil {
		return err
	}
	return Poll(ctx, 120*time.Second, "kube-apiserver /readyz", func() error {
		return httpOK(client, "https://"+NodeIP+":6443/readyz", c.token("admin"))
	})
}

func (c *Cluster) startControllerManager(context.Context) error {
	kc := c.path("pki", "kube-controller-manager.kubeconfig")
	return c.start("kube-controller-manager", c.k8s("kube-controller-manager"),
		"--kubeconfig="+kc, "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--bind-address=127.0.0.1", "--leader-elect=false", "--use-service-account-credentials=true",
		"--root-ca-file="+c.path("pki", "ca.crt"), "--service-account-private-key-file="+c.path("pki", "sa.key"),
		"--cert-dir="+c.path("pki", "kcm-generated"), "--allocate-node-cidrs=false", "--v=1")
}

func (c *Cluster) startScheduler(context.Context) error {
	kc := c.path("pki", "kube-scheduler.kubeconfig")
	return c.start("kube-scheduler", c.k8s("kube-scheduler"),
		"--kubeconfig="+kc, "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--bind-address=127.0.0.1", "--leader-elect=false", "--cert-dir="+c.path("pki", "scheduler-generated"), "--v=1")
}

func (c *Cluster) containerdSocket() string { return c.path("containerd", "containerd.sock") }

func (c *Cluster) startContainerd(ctx context.Context) error {
	if err := c.start("containerd", "containerd", "--config", c.path("containerd", "config.toml")); err != nil {
		return err
	}
	return Poll(ctx, 60*time.Second, "containerd", func() error {
		_, err := c.Ctr("version")
		return err
	})
}

// Ctr runs containerd's ctr against the test's containerd, in the Kubernetes namespace.
func (c *Cluster) Ctr(args ...string) (string, error) {
	out, err := exec.Command("ctr", append([]string{"--address", c.containerdSocket(), "--namespace", "k8s.io"}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// ImportImage loads the image tarball the outer run wrote for tag.
func (c *Cluster) ImportImage(tag string) error {
	_, err := c.Ctr("images", "import", c.ImageTarball(tag))
	return err
}

func (c *Cluster) importImages(context.Context) error {
	for _, tag := range []string{"pause", "v1", "sandbox", "agent-sandbox-controller"} {
		if err := c.ImportImage(tag); err != nil {
			return err
		}
	}
	// The kubelet's image garbage collection must never take the sandbox image.
	_, err := c.Ctr("images", "label", SandboxImage, "io.cri-containerd.pinned=pinned")
	return err
}

func (c *Cluster) startProxy(context.Context) error {
	return c.start("kube-proxy", c.k8s("kube-proxy"), "--config="+c.path("kube-proxy.yaml"), "--v=1")
}

func (c *Cluster) startKubelet(ctx context.Context) error {
	err := c.start("kubelet", c.k8s("kubelet"), "--config="+c.path("kubelet.yaml"),
		"--kubeconfig="+c.path("pki", "kubelet.kubeconfig"), "--root-dir="+c.path("kubelet"),
		"--cert-dir="+c.path("kubelet", "pki"), "--node-ip="+NodeIP, "--hostname-override="+NodeName, "--v=1")
	if err != nil {
		return err
	}
	return Poll(ctx, 180*time.Second, "node Ready", func() error {
		out, err := c.Kubectl(ctx, "get", "node", NodeName, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if err != nil {
			return err
		}
		if out != "True" {
			return fmt.Errorf("Ready=%q", out)
		}
		return nil
	})
}

// createStorage provides what the transcript PVC binds to: a default StorageClass without a
// provisioner and one local PersistentVolume on the node.
func (c *Cluster) createStorage(ctx context.Context) error {
	if err := os.Chown(c.path("pv"), 65532, 65532); err != nil {
		return err
	}
	_, err := c.Apply(ctx, StorageYAML(c.path("pv")))
	return err
}

// StorageYAML is the StorageClass and the local PersistentVolume at dir.
func StorageYAML(dir string) string {
	return `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
---
` + LocalPVYAML("transcripts-local", dir, "")
}

// LocalPVYAML is a 10Gi local PersistentVolume at dir on the node; claim ("namespace/name",
// optional) binds it ahead to that claim alone.
func LocalPVYAML(name, dir, claim string) string {
	ref := ""
	if ns, n, ok := strings.Cut(claim, "/"); ok {
		ref = fmt.Sprintf("\n  claimRef: {namespace: %s, name: %s}", ns, n)
	}
	return fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata:
  name: %s
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local%s
  local: {path: %s}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [%s]}
`, name, ref, dir, NodeName)
}

// Kubectl runs kubectl as the admin.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	return c.KubectlIn(ctx, "", args...)
}

// KubectlIn runs kubectl as the admin with stdin.
func (c *Cluster) KubectlIn(ctx context.Context, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.k8s("kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Apply applies YAML as the admin.
func (c *Cluster) Apply(ctx context.Context, yaml string) (string, error) {
	out, err := c.KubectlIn(ctx, yaml, "apply", "-f", "-")
	if err != nil {
		return out, fmt.Errorf("kubectl apply: %v: %s", err, out)
	}
	return out, nil
}

// KubectlBin is the path of kubectl.
func (c *Cluster) KubectlBin() string { return c.k8s("kubectl") }

// HelmBin is the path of helm.
func (c *Cluster) HelmBin() string { return c.k8s("helm") }

func (c *Cluster) token(user string) string {
	b, _ := os.ReadFile(c.path("pki", "tokens.csv"))
	for i, line := range strings.Split(string(b), "\n") {
		if i < len(tokenUsers) && tokenUsers[i].name == user {
			return strings.SplitN(line, ",", 2)[0]
		}
	}
	return ""
}

// adminHTTP is an HTTP client that trusts the cluster's CA.
func (c *Cluster) adminHTTP() (*http.Client, error) {
	ca, err := os.ReadFile(c.path("pki", "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}, nil
}

func httpOK(client *http.Client, url, token string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
