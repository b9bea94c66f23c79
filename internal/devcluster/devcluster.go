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

// Package devcluster runs the operator locally as it runs in a Pod: a control plane from the
// envtest binaries with the CRDs, then the manager and the transcript-store sidecar as real
// processes sharing one data directory, and the samples. make run-local and the e2e tests
// use it.
package devcluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/agent-sessions/agent-session-operator/internal/memtune"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// Options configure a local cluster.
type Options struct {
	// RepoRoot holds config/; BinDir holds the built manager and transcript-store.
	RepoRoot, BinDir string
	// StateDir receives the kubeconfig, transcripts and logs; emptied on start.
	StateDir string
	// NoManager starts only the control plane with the CRDs.
	NoManager bool
	// NoSamples skips applying config/samples.
	NoSamples bool
	// Log receives progress lines and the processes' prefixed output.
	Log io.Writer
	// ManagerArgs are appended to the manager's flags (tuning, timeouts).
	ManagerArgs []string
	// MCPEverything starts the reference everything MCP server (installed by
	// hack/mcp-npm.sh) for Agents to use as a tool server: EverythingURL.
	MCPEverything bool
	// StoreArgs are appended to the transcript-store's flags.
	StoreArgs []string
	// HistoryAddr is the first transcript-store's public address (empty: a free port), for
	// shard fronts that must know every store's address before the first one starts.
	HistoryAddr string
	// EtcdNoFsync starts etcd with --unsafe-no-fsync: a crash of the machine may lose its
	// last writes, which a throwaway bench cluster does not mind, and writes stop waiting on
	// the disk (on a small VM that wait, not the operator, sets the pace of a scale bench).
	EtcdNoFsync bool
	// APIServerFlags are set on the kube-apiserver (name without dashes: value), e.g. a
	// bench that plays months in an hour compressing the server's own time windows.
	APIServerFlags map[string]string
}

// Cluster is a running local cluster.
type Cluster struct {
	opts Options
	// EverythingURL is the everything MCP server's streamable HTTP endpoint (MCPEverything).
	EverythingURL  string
	stopEverything func()
	env            *envtest.Environment
	Config         *rest.Config
	Kubeconfig     string
	// managerKubeconfig is the manager's own: its ServiceAccount, not the people's.
	managerKubeconfig string
	// HistoryAddr is the transcript-store's public API address (host:port), served over
	// HTTPS with a certificate of the local CA: HistoryURL and HistoryCAFile.
	HistoryAddr string
	// HistoryCAFile is the local CA (PEM), which signed the certificate the history API
	// (its doors) and the webhooks serve.
	HistoryCAFile string
	// Token is the bearer token of the kubeconfig's user (a cluster-admin ServiceAccount).
	Token string
	// MetricsAddr is the manager's metrics endpoint (host:port).
	MetricsAddr string
	procs       []*process
	manager     *process
	store       *process
}

// Kill SIGKILLs the manager (Manager) or the transcript-store (Store), as a node failure
// or an OOM kill would; Restart starts it again with the same flags.
const (
	Manager = "manager"
	Store   = "transcript-store"
)

// TranscriptDir is where the transcript-store keeps its files.
func (c *Cluster) TranscriptDir() string {
	return filepath.Join(c.opts.StateDir, "data", "transcripts")
}

// TranscriptSocket is the transcript-store's internal API (the manager's client).
func (c *Cluster) TranscriptSocket() string {
	return filepath.Join(c.opts.StateDir, "transcript.sock")
}

func (c *Cluster) proc(name string) *process {
	if name == Manager {
		return c.manager
	}
	return c.store
}

// Kill ends the named process with SIGKILL and waits for it to be gone.
func (c *Cluster) Kill(name string) {
	p := c.proc(name)
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Restart starts the named process again (after Kill) with the same flags.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	p := c.proc(name)
	return p.start(ctx, c.opts.Log)
}

// RestartAPIServer stops kube-apiserver and starts it again on the same port with the same
// certificates; etcd and the data in it stay.
func (c *Cluster) RestartAPIServer() error {
	api := c.env.ControlPlane.GetAPIServer()
	// Stop sends SIGTERM and, when the server is slow to drain its watches, SIGKILL with an
	// error: either way it is gone.
	if err := api.Stop(); err != nil {
		fmt.Fprintln(c.opts.Log, "devcluster: kube-apiserver killed:", err)
	}
	if err := api.Start(); err != nil {
		return fmt.Errorf("start kube-apiserver: %w", err)
	}
	return nil
}

// EtcdURL is etcd's client URL (plain HTTP on the loopback), whose /metrics has the
// database's size (etcd_mvcc_db_total_size_in_bytes and _in_use_in_bytes).
func (c *Cluster) EtcdURL() string {
	if c.env == nil || c.env.ControlPlane.Etcd == nil || c.env.ControlPlane.Etcd.URL == nil {
		return ""
	}
	return c.env.ControlPlane.Etcd.URL.String()
}

// ManagerPID is the manager process's id, 0 when none runs.
func (c *Cluster) ManagerPID() int { return c.manager.pid() }

// StorePID is the transcript-store process's id, 0 when none runs.
func (c *Cluster) StorePID() int { return c.store.pid() }

func (p *process) pid() int {
	if p == nil || p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Start brings the cluster up; Stop tears it down.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Log == nil {
		o.Log = os.Stdout
	}
	if testenv.Assets() == "" {
		return nil, errors.New(testenv.SkipReason)
	}
	if err := os.RemoveAll(o.StateDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{opts: o, env: testenv.New()}
	// The webhook configurations are installed with a self-signed CA and pointed at the
	// manager on loopback (envtest's webhook install does exactly this).
	// An install of one shard has no shard label webhooks (shard.LabelWebhooks), as
	// config/default and the chart with shards: 1: a create calls one webhook, not two.
	if _, err := os.Stat(filepath.Join(o.RepoRoot, "config", "webhook", "manifests.yaml")); err == nil && !o.NoManager {
		var except []string
		if !managerShard(o.ManagerArgs).Sharded() {
			except = shard.LabelWebhooks
		}
		webhooks, err := testenv.WithWebhooksExcept(except...)
		if err != nil {
			return nil, err
		}
		c.env = testenv.New(webhooks)
	}
	// Certificates and the service-account signing key live in the state directory, not in
	// a temporary one, so RestartAPIServer brings back a server every client still trusts.
	certDir := filepath.Join(o.StateDir, "apiserver")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	c.env.ControlPlane.GetAPIServer().CertDir = certDir
	if o.EtcdNoFsync {
		if c.env.ControlPlane.Etcd == nil {
			c.env.ControlPlane.Etcd = &envtest.Etcd{}
		}
		c.env.ControlPlane.Etcd.Configure().Set("unsafe-no-fsync", "true")
	}
	for name, value := range o.APIServerFlags {
		c.env.ControlPlane.GetAPIServer().Configure().Set(name, value)
	}
	fmt.Fprintln(o.Log, "devcluster: starting kube-apiserver and etcd")
	cfg, err := c.env.Start()
	if err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	c.Config = cfg
	if err := c.writeKubeconfig(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	if !o.NoManager {
		if err := c.trustOneCA(ctx); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if err := c.startSandboxController(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	if !o.NoManager {
		if err := c.startProcesses(ctx); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if o.MCPEverything {
		url, stop, err := testenv.StartEverything(o.Log)
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("start the everything MCP server: %w", err)
		}
		c.EverythingURL, c.stopEverything = url, stop
	}
	if err := c.writeEnv(); err != nil {
		c.Stop()
		return nil, err
	}
	if !o.NoSamples {
		if err := c.Kubectl(ctx, o.Log, "apply", "-k", filepath.Join(o.RepoRoot, "config", "samples")); err != nil {
			c.Stop()
			return nil, fmt.Errorf("apply samples: %w", err)
		}
		if err := c.useRealProvider(ctx); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// writeKubeconfig gives people a ServiceAccount token bound to cluster-admin rather than a
// client certificate: the same credential then works for kubectl and for the history API,
// which authenticates bearer tokens with TokenReview. The manager gets its own
// ServiceAccount and kubeconfig, as in a cluster: the webhooks tell its writes (tool-made
// objects, expiring approvals) from a person's by the user, so the two must differ.
func (c *Cluster) writeKubeconfig(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	if c.Token, err = adminToken(ctx, cs, "dev-admin"); err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(c.opts.StateDir, "kubeconfig")
	if err := c.kubeconfigFor("dev-admin", c.Token, c.Kubeconfig); err != nil {
		return err
	}
	managerToken, err := adminToken(ctx, cs, "agent-sessions-manager")
	if err != nil {
		return err
	}
	c.managerKubeconfig = filepath.Join(c.opts.StateDir, "manager.kubeconfig")
	return c.kubeconfigFor("agent-sessions-manager", managerToken, c.managerKubeconfig)
}

// adminToken makes the ServiceAccount name in default, binds it to cluster-admin and returns
// a week's token for it: the API server's own audiences plus the one the transcript-store
// asks of history readers.
func adminToken(ctx context.Context, cs kubernetes.Interface, name string) (string, error) {
	const ns = "default"
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create %s service account: %w", name, err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("bind %s to cluster-admin: %w", name, err)
	}
	audiences, err := apiAudiences(ctx, cs, ns, name)
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](7 * 24 * 3600), Audiences: append(audiences, HistoryAudience)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for %s: %w", name, err)
	}
	return tr.Status.Token, nil
}

// kubeconfigFor writes a kubeconfig of the local cluster for a token.
func (c *Cluster) kubeconfigFor(user, token, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user, Namespace: "default"}
	kc.CurrentContext = "local"
	return clientcmd.WriteToFile(*kc, path)
}

// HistoryAudience is the token audience the transcript-store asks of history readers (its
// --token-audiences default).
const HistoryAudience = "agent-sessions"

// apiAudiences are the audiences the API server gives a token that asks for none.
func apiAudiences(ctx context.Context, cs kubernetes.Interface, ns, sa string) ([]string, error) {
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("probe token for %s: %w", sa, err)
	}
	rv, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("review probe token: %w", err)
	}
	return rv.Status.Audiences, nil
}

// HistoryURL is the base URL of the history API.
func (c *Cluster) HistoryURL() string { return "https://" + c.HistoryAddr }

// MCPURL is the session tools' MCP endpoint (streamable HTTP) for a namespace; it takes
// Token as a bearer token.
func (c *Cluster) MCPURL(namespace string) string {
	return c.HistoryURL() + "/mcp?namespace=" + namespace
}

// writeCardSigningKey writes the development key the A2A cards are signed with (a new ECDSA
// P-256 key, PKCS #8 PEM), once per state directory as the serving certificate is, so the
// JWKS a local cluster publishes is not empty; an explicit --a2a-card-signing-key in
// StoreArgs comes after it and wins.
func (c *Cluster) writeCardSigningKey() (string, error) {
	path := filepath.Join(c.opts.StateDir, "a2a-card-signing.pem")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(c.opts.StateDir, 0o700); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

// startProcesses runs the transcript-store and the manager as the Pod runs them: one data
// directory, the internal API on a unix socket between them.
func (c *Cluster) startProcesses(ctx context.Context) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	c.HistoryAddr = "127.0.0.1:" + strconv.Itoa(ports[0])
	if c.opts.HistoryAddr != "" {
		c.HistoryAddr = c.opts.HistoryAddr
	}
	c.MetricsAddr = "127.0.0.1:" + strconv.Itoa(ports[1])
	var webhookArgs []string
	if wh := c.env.WebhookInstallOptions; len(wh.ValidatingWebhooks)+len(wh.MutatingWebhooks) > 0 {
		webhookArgs = []string{"--webhook-port=" + strconv.Itoa(wh.LocalServingPort)}
	}
	p, err := c.startPair(ctx, pairOptions{dir: c.opts.StateDir, historyAddr: c.HistoryAddr, metricsAddr: c.MetricsAddr,
		webhookArgs: webhookArgs, managerArgs: c.opts.ManagerArgs, storeArgs: c.opts.StoreArgs})
	if err != nil {
		return err
	}
	c.store, c.manager = p.store, p.manager
	return nil
}

// NoSandboxesLine is the one line run-local prints about sandboxes: why none runs here and
// how to get them.
const NoSandboxesLine = "devcluster: sandboxes: none run here: this control plane has no node for their Pods " +
	"(a node needs root, containerd and a kubelet); watch one run with `sudo make test-cluster-sandbox`, " +
	"or install on a cluster with nodes (docs/tasks/run-tools-in-a-sandbox.md)"

// startSandboxController runs agent-sandbox's controller (hack/agent-sandbox.sh builds it)
// beside the control plane, as the cluster test and the chart run it as a Pod, and says in
// one line why sandboxes still cannot start here: no node runs their Pods.
func (c *Cluster) startSandboxController(ctx context.Context) error {
	dir := testenv.SandboxAssets()
	if dir == "" {
		fmt.Fprintln(c.opts.Log, "devcluster: sandboxes: off, agent-sandbox is not built (make agent-sandbox)")
		return nil
	}
	p := &process{name: "agent-sandbox-controller", path: filepath.Join(dir, "agent-sandbox-controller"),
		args: testenv.SandboxControllerArgs(), env: []string{"KUBECONFIG=" + c.Kubeconfig}}
	if err := p.start(ctx, c.opts.Log); err != nil {
		return fmt.Errorf("start agent-sandbox-controller: %w", err)
	}
	c.procs = append(c.procs, p)
	fmt.Fprintln(c.opts.Log, NoSandboxesLine)
	return nil
}

// pairOptions place one transcript-store and manager pair.
type pairOptions struct {
	dir, historyAddr, metricsAddr string
	// webhookArgs serve the API server's webhooks; none turns them off.
	webhookArgs, managerArgs, storeArgs []string
}

// Shard is one more transcript-store and manager pair on the cluster's API server, as
// another Pod of a sharded install runs: its own data directory, socket and listeners, and
// no webhook (the first pair's serves every request).
type Shard struct {
	c              *Cluster
	store, manager *process
	dir            string
	// HistoryAddr is the shard's store's public address.
	HistoryAddr string
}

// ShardOptions place one more pair: its manager's flags (--shard=i/n), its store's beyond
// Options.StoreArgs, and its store's public address (empty: a free port).
type ShardOptions struct {
	ManagerArgs, StoreArgs []string
	HistoryAddr            string
}

// StartShard starts a pair in its own directory under the state directory.
func (c *Cluster) StartShard(ctx context.Context, name string, o ShardOptions) (*Shard, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(c.opts.StateDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addr := o.HistoryAddr
	if addr == "" {
		addr = "127.0.0.1:" + strconv.Itoa(ports[0])
	}
	p, err := c.startPair(ctx, pairOptions{dir: dir, historyAddr: addr, metricsAddr: "127.0.0.1:" + strconv.Itoa(ports[1]),
		managerArgs: o.ManagerArgs, storeArgs: append(slices.Clone(c.opts.StoreArgs), o.StoreArgs...)})
	if err != nil {
		return nil, err
	}
	return &Shard{c: c, store: p.store, manager: p.manager, dir: dir, HistoryAddr: addr}, nil
}

// TranscriptDir is where the shard's transcript-store keeps its files.
func (s *Shard) TranscriptDir() string { return filepath.Join(s.dir, "data", "transcripts") }

// ManagerPID is the shard's manager process id.
func (s *Shard) ManagerPID() int { return s.manager.pid() }

// StorePID is the shard's transcript-store process id.
func (s *Shard) StorePID() int { return s.store.pid() }

// KillManager SIGKILLs the shard's manager and waits for it to be gone.
func (s *Shard) KillManager() {
	_ = syscall.Kill(-s.manager.cmd.Process.Pid, syscall.SIGKILL)
	<-s.manager.done
}

// RestartManager starts the shard's manager again with the same flags.
func (s *Shard) RestartManager(ctx context.Context) error { return s.manager.start(ctx, s.c.opts.Log) }

type pair struct{ store, manager *process }

func (c *Cluster) startPair(ctx context.Context, o pairOptions) (*pair, error) {
	dataDir := filepath.Join(o.dir, "data")
	socket := filepath.Join(o.dir, "transcript.sock")
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	certDir, err := c.writeServingCerts()
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	cardKey, err := c.writeCardSigningKey()
	if err != nil {
		return nil, fmt.Errorf("A2A card signing key: %w", err)
	}
	store := &process{name: "transcript-store", path: filepath.Join(c.opts.BinDir, "transcript-store"), args: []string{
		"--tls-cert-dir=" + certDir,
		"--data-dir=" + filepath.Join(dataDir, "transcripts"),
		"--socket=" + socket,
		"--listen=" + o.historyAddr,
		"--kubeconfig=" + c.Kubeconfig,
		"--a2a-card-signing-key=" + cardKey,
	}}
	store.args = append(store.args, o.storeArgs...)
	store.env = memoryLimit(memoryLimitMiB["transcript-store"])
	if err := c.run(ctx, store); err != nil {
		return nil, err
	}
	mgr := &process{name: "manager", path: filepath.Join(c.opts.BinDir, "manager"), args: []string{
		"--kubeconfig=" + c.managerKubeconfig,
		"--metrics-bind-address=" + o.metricsAddr,
		"--transcript-socket=" + socket,
		"--workspace-root=" + filepath.Join(dataDir, "workspaces"),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[0]),
		// Everything a local cluster talks to (MCP servers, model stubs, sinks) runs on this
		// machine; a real install allows loopback nowhere by default.
		"--egress-allow=127.0.0.1/32",
		// SessionHooks' status.url: this pair's history listener.
		"--hook-base-url=https://" + o.historyAddr,
		// No Service routes to a local manager: nothing to wait for when it is stopped.
		"--shutdown-delay=0",
		// The webhooks' certificate, and the CA its A2A and MCP clients trust beside the
		// system's: the one that signed the doors' certificate too (certs.go).
		"--webhook-cert-dir=" + certDir,
	}}
	if len(o.webhookArgs) > 0 {
		mgr.args = append(mgr.args, o.webhookArgs...)
	} else {
		mgr.args = append(mgr.args, "--webhook-port="+strconv.Itoa(ports[1]), "--enable-webhooks=false")
	}
	mgr.args = append(mgr.args, o.managerArgs...)
	mgr.env = memoryLimit(memoryLimitMiB["manager"])
	if err := c.run(ctx, mgr); err != nil {
		return nil, err
	}
	return &pair{store: store, manager: mgr}, waitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(ports[0])+"/readyz", 60*time.Second)
}

func (c *Cluster) run(ctx context.Context, p *process) error {
	if err := p.start(ctx, c.opts.Log); err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

// Stop ends the processes (SIGTERM, then SIGKILL after a grace period) and the control plane.
func (c *Cluster) Stop() {
	if c.stopEverything != nil {
		c.stopEverything()
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(10 * time.Second)
	}
	if c.env != nil {
		if err := c.env.Stop(); err != nil {
			fmt.Fprintln(c.opts.Log, "devcluster: stop control plane:", err)
		}
	}
}

// KubectlPath is the kubectl hack/envtest-binaries.sh built.
func KubectlPath() string { return filepath.Join(testenv.Assets(), "kubectl") }

// Kubectl runs the built kubectl against the cluster.
func (c *Cluster) Kubectl(ctx context.Context, out io.Writer, args ...string) error {
	p := &process{name: "kubectl", path: KubectlPath(), args: append([]string{"--kubeconfig=" + c.Kubeconfig}, args...)}
	return p.runToEnd(ctx, out)
}

// memoryLimitMiB is each container's memory limit in config/manager's Deployment.
var memoryLimitMiB = map[string]int64{"manager": 512, "transcript-store": 256}

// memoryLimit passes a container's memory limit as the Deployment does (memtune keeps the
// runtime under its share of it), unless the environment sets GOMEMLIMIT.
func memoryLimit(mib int64) []string {
	if os.Getenv("GOMEMLIMIT") != "" {
		return nil
	}
	return []string{memtune.ContainerLimitEnv + "=" + strconv.FormatInt(mib<<20, 10)}
}

// FreeAddrs are n loopback addresses free at the time of asking, for processes whose
// addresses must be known before they start (shard fronts).
func FreeAddrs(n int) ([]string, error) {
	ports, err := freePorts(n)
	addrs := make([]string, len(ports))
	for i, p := range ports {
		addrs[i] = "127.0.0.1:" + strconv.Itoa(p)
	}
	return addrs, err
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// useRealProvider points the sample research Agent at OpenAI or Anthropic when the
// environment holds an API key, so a local run can talk to a real model.
func (c *Cluster) useRealProvider(ctx context.Context) error {
	provider, model, key := "", "", ""
	switch {
	case os.Getenv("OPENAI_API_KEY") != "":
		provider, model, key = "openai", envOr("OPENAI_MODEL", "gpt-4o-mini"), os.Getenv("OPENAI_API_KEY")
	case os.Getenv("ANTHROPIC_API_KEY") != "":
		provider, model, key = "anthropic", envOr("ANTHROPIC_MODEL", "claude-3-5-haiku-latest"), os.Getenv("ANTHROPIC_API_KEY")
	default:
		return nil
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "model-api-key", Namespace: "default"}, StringData: map[string]string{"apiKey": key}}
	if _, err := cs.CoreV1().Secrets("default").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("api key secret: %w", err)
	}
	patch := fmt.Sprintf(`{"spec":{"model":{"provider":%q,"name":%q,"script":null,"apiKeySecretRef":{"name":"model-api-key","key":"apiKey"}}}}`, provider, model)
	fmt.Fprintf(c.opts.Log, "devcluster: Agent research uses %s model %s\n", provider, model)
	return c.Kubectl(ctx, c.opts.Log, "patch", "agent", "research", "--type=merge", "-p", patch)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// managerShard is the shard the manager's flags name (--shard=i/n or --shard i/n), or one
// of one.
func managerShard(args []string) shard.Shard {
	var s shard.Shard
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--shard=")
		if !ok && a == "--shard" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			_ = s.Set(v)
		}
	}
	return s
}
