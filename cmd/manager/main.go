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

// Command manager runs the controllers, the admission webhook and the agent runtime.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"github.com/agent-sessions/agent-session-operator/controllers/agent"
	"github.com/agent-sessions/agent-session-operator/controllers/agentsession"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	transcriptclient "github.com/agent-sessions/agent-session-operator/internal/transcript/client"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/agent-sessions/agent-session-operator/controllers"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/controllers/sessionschedule"
	"github.com/agent-sessions/agent-session-operator/controllers/subagentrun"
	"github.com/agent-sessions/agent-session-operator/controllers/toolapproval"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
	"github.com/agent-sessions/agent-session-operator/internal/approval"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/certs"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/eventrec"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/memtune"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/tracing"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	"github.com/agent-sessions/agent-session-operator/webhook"
)

type options struct {
	shutdownDelay  time.Duration
	metricsAddr    string
	metricsSecure  bool
	metricsCertDir string
	probeAddr      string
	pprofAddr      string
	leaderElect    bool
	webhookPort    int
	webhookCertDir string
	// ownCA is the CA file of the operator's serving certificate (in the webhook's cert dir).
	ownCA            string
	enableWebhooks   bool
	enableHTTP2      bool
	transcriptSocket string
	workspaceRoot    string
	maxTurns         int
	maxTurnsPerNS    int
	attemptTimeout   time.Duration
	idleTimeout      time.Duration
	liveReplies      bool
	egressAllow      stringList
	egressStrict     bool
	egressAPIServer  bool
	mcpProbeTimeout  time.Duration
	mcpProbesPerNS   int
	concurrency      int
	ttlAfterFinished time.Duration
	statusInterval   time.Duration
	qps              float64
	burst            int
	toolRate         int
	deliveryAttempts int
	shard            shard.Shard
	a2aReadLimit     byteSize
	mcpReadLimit     byteSize
	hookBaseURL      string
	sandboxes        bool
	sandboxImage     string
}

func main() {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address the metrics endpoint binds to; 0 disables it.")
	flag.BoolVar(&o.metricsSecure, "metrics-secure", true, "Serve metrics over HTTPS to callers whose bearer token may get the /metrics URL (TokenReview + SubjectAccessReview); false serves plain HTTP to anyone.")
	flag.StringVar(&o.metricsCertDir, "metrics-cert-dir", "", "Directory holding tls.crt and tls.key for the metrics server; empty means a self-signed certificate.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address the health probes bind to.")
	flag.StringVar(&o.pprofAddr, "pprof-bind-address", "0", "Address of the Go profiler's HTTP endpoints (/debug/pprof); 0 disables it.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false, "Enable leader election so only one manager is active.")
	flag.IntVar(&o.webhookPort, "webhook-port", 9443, "Port of the admission webhook server.")
	flag.StringVar(&o.webhookCertDir, "webhook-cert-dir", "", "Directory holding tls.crt and tls.key for the webhook server.")
	flag.BoolVar(&o.enableWebhooks, "enable-webhooks", true, "Serve the admission webhooks.")
	flag.BoolVar(&o.enableHTTP2, "enable-http2", false, "Serve HTTP/2 on the webhook and metrics servers (off: CVE-2023-44487).")
	flag.StringVar(&o.transcriptSocket, "transcript-socket", "/run/agent-sessions/transcript.sock", "The transcript-store's internal API: a unix socket path, or http://host:port.")
	flag.StringVar(&o.workspaceRoot, "workspace-root", "/var/lib/agent-sessions/workspaces", "Directory of the sub-agent workspaces (attachments).")
	flag.IntVar(&o.maxTurns, "max-concurrent-turns", turns.DefaultMaxConcurrentTurns, "Agent turns running at once across all sessions.")
	flag.IntVar(&o.maxTurnsPerNS, "max-turns-per-namespace", 0, "Agent turns of one namespace running at once, so no namespace holds every slot (0: half of --max-concurrent-turns).")
	flag.DurationVar(&o.attemptTimeout, "model-attempt-timeout", provider.DefaultAttemptTimeout, "Bound of one model HTTP attempt; a hung attempt is cut off and retried.")
	flag.DurationVar(&o.idleTimeout, "model-idle-timeout", provider.DefaultIdleTimeout, "How long a model HTTP attempt may go without a byte (first byte or progress) before it is cut off and retried.")
	flag.BoolVar(&o.liveReplies, "live-replies", true, "Stream model replies and publish their text as it arrives (session.delta on /events); off asks providers for whole replies.")
	flag.Var(&o.egressAllow, "egress-allow", "Allow outbound model, sink, MCP and A2A connections to a CIDR, host[:port] or URL prefix (repeatable). Loopback and link-local are refused unless an entry allows them; the API server only with --egress-allow-apiserver.")
	flag.BoolVar(&o.egressStrict, "egress-deny-unlisted", false, "Refuse every model, sink, MCP and A2A destination no --egress-allow entry names.")
	flag.BoolVar(&o.egressAPIServer, "egress-allow-apiserver", false, "Let model, sink, MCP and A2A connections reach the cluster's API server. Off, it is refused whatever --egress-allow says (a 10.0.0.0/8 entry does not re-open the kubernetes Service).")
	flag.DurationVar(&o.mcpProbeTimeout, "mcp-probe-timeout", agent.DefaultMCPProbeTimeout, "Bound of one readiness probe of an Agent's MCP servers (initialize and tools/list), whatever their timeoutSeconds.")
	flag.IntVar(&o.mcpProbesPerNS, "mcp-probes-per-namespace", agent.DefaultMCPProbesPerNamespace, "Agents of one namespace whose MCP servers are probed at once; a namespace's hanging servers hold only its own probes.")
	flag.IntVar(&o.concurrency, "max-concurrent-reconciles", 16, "Concurrent reconciles of the AgentSession, SessionSend and SubagentRun controllers.")
	flag.DurationVar(&o.statusInterval, "session-status-interval", agentsession.DefaultSessionStatusInterval, "How long the turn engine's reports of a session gather before its status is written (a busy session's status is written about once per interval); negative writes after every turn.")
	flag.DurationVar(&o.shutdownDelay, "shutdown-delay", 5*time.Second, "How long the manager keeps serving (admission webhooks included) after SIGTERM before it stops, so that Services stop sending to a terminating Pod first; a second signal exits at once.")
	flag.DurationVar(&o.ttlAfterFinished, "ttl-after-finished", controllers.DefaultTTLAfterFinished, "Finished SessionSends and SubagentRuns without spec.ttlSecondsAfterFinished are deleted this long after they finish; 0 keeps them.")
	flag.Float64Var(&o.qps, "kube-api-qps", 500, "Client-side rate limit of API requests per second.")
	flag.IntVar(&o.burst, "kube-api-burst", 1000, "Client-side burst of API requests.")
	flag.IntVar(&o.deliveryAttempts, "delivery-attempts", delivery.DefaultAttempts, "Attempts per announce message to a sink (a webhook POST, a chat sink's part) before it fails; 5xx, network errors and 429s are retried, other 4xx are not.")
	o.a2aReadLimit, o.mcpReadLimit = egress.DefaultA2AReadLimit, egress.DefaultMCPReadLimit
	flag.Var(&o.a2aReadLimit, "a2a-read-limit", "Bytes read of one answer of a remote A2A agent (its card, a response, a whole stream) before the call fails; read before the SDK decodes it (a quantity: 8Mi).")
	flag.Var(&o.mcpReadLimit, "mcp-read-limit", "Bytes read of one answer of an MCP server (a JSON response, or one event of its stream) before the call fails; read before the SDK decodes it (a quantity: 8Mi).")
	flag.IntVar(&o.toolRate, "tool-creates-per-minute", policy.DefaultToolCreatesPerMinute, "SessionSends and SubagentRuns the agent tools of one namespace may create per minute, unless its SessionPolicy sets spec.limits.toolCreatesPerMinute.")
	flag.Var(&o.shard, "shard", "Own only the namespaces of shard i of n (i/n; a namespace belongs to fnv32a(name) mod n); each shard elects its own leader. Default 0/1: every namespace.")
	flag.StringVar(&o.hookBaseURL, "hook-base-url", "", "The transcript-store listener's URL as senders reach it (https://host:port): SessionHooks' status.url is it followed by /hooks/<namespace>/<name>; empty gives the path alone.")
	flag.BoolVar(&o.sandboxes, "sandboxes", false, "Run sandboxed Agents' tools in kubernetes-sigs/agent-sandbox Sandboxes: the Agent controller keeps each one's SandboxTemplate and SandboxWarmPool. Needs agent-sandbox's CRDs and controller in the cluster.")
	flag.StringVar(&o.sandboxImage, "sandbox-image", "", "The sandbox image of an Agent that names none in spec.sandbox.image: sandboxd as its entrypoint, a shell and coreutils (Dockerfile.sandbox builds one).")
	webhookCerts := certs.BindFlags(flag.CommandLine)
	zapOpts := zap.Options{Development: false}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")
	log.Info("Go collector target", "gcPercent", memtune.Apply(), "memoryLimit", memtune.ApplyLimitAt(memtune.ManagerLimitFraction))
	registerMetrics(metrics.Registry)

	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.New(),
		Cache:                  cacheindex.ShardCacheOptions(o.shard),
		Metrics:                metricsOptions(o, tlsOpts),
		HealthProbeBindAddress: o.probeAddr,
		PprofBindAddress:       o.pprofAddr,
		LeaderElection:         o.leaderElect,
		LeaderElectionID:       o.shard.LeaseName("agent-session-operator.sessions.agents.dev"),
		WebhookServer: webhookCerts.Gate(ctrlwebhook.NewServer(ctrlwebhook.Options{
			Port:    o.webhookPort,
			CertDir: o.webhookCertDir,
			TLSOpts: tlsOpts,
		}), o.webhookCertDir),
	})
	if err != nil {
		log.Error(err, "unable to create manager")
		os.Exit(1)
	}

	if err := webhookCerts.Setup(mgr); err != nil {
		log.Error(err, "unable to set up the webhook certificates")
		os.Exit(1)
	}
	// The agents' A2A and MCP tools may call the operator's own doors (another namespace or
	// shard), which serve with the certificate its CA signed: they trust that CA.
	o.ownCA = filepath.Join(webhookCerts.CertDir, "ca.crt")
	if err := setup(mgr, o); err != nil {
		log.Error(err, "unable to set up the operator")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		log.Error(err, "unable to set up health check")
		os.Exit(1)
	}
	ready := healthz.Ping
	if o.enableWebhooks {
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", ready); err != nil {
		log.Error(err, "unable to set up ready check")
		os.Exit(1)
	}

	// Traces go out over OTLP when the standard OTEL_* environment names an endpoint.
	stopTracing, err := tracing.Setup(context.Background())
	if err != nil {
		log.Error(err, "unable to set up tracing")
		os.Exit(1)
	}
	defer func() { _ = stopTracing(context.Background()) }()

	log.Info("starting manager")
	if err := mgr.Start(lameDuck(ctrl.SetupSignalHandler(), o.shutdownDelay)); err != nil {
		log.Error(err, "manager exited with an error")
		_ = stopTracing(context.Background())
		os.Exit(1)
	}
}

// setup wires the indexes, the turn engine, the controllers and the webhooks into mgr.
func setup(mgr ctrl.Manager, o options) error {
	ctx := context.Background()
	if err := cacheindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	store := transcriptClient(o.transcriptSocket)
	egressPolicy, err := egress.Parse(o.egressAllow, o.egressStrict)
	if err != nil {
		return err
	}
	if !o.egressAPIServer {
		if err := egressPolicy.RefuseAPIServer(ctx, net.DefaultResolver, mgr.GetConfig().Host); err != nil {
			return err
		}
	}
	watcher, err := client.NewWithWatch(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	events := eventrec.New(mgr.GetClient(), mgr.GetScheme(), eventrec.Options{})
	if err := mgr.Add(events); err != nil {
		return err
	}
	// One MCP pool for the turns and the Agent reconciler: header Secrets under the Secret
	// rule (read uncached), server URLs and dialed addresses under the egress policy.
	mcpOpts := mcptools.ManagerOptions(mgr.GetAPIReader(), egressPolicy)
	mcpOpts.Transport = egressPolicy.Transport(egress.ClientOptions{ExtraRootsFile: o.ownCA})
	mcpOpts.ReadLimit = int64(o.mcpReadLimit)
	mcp := mcptools.NewPool(mcpOpts)
	// Remote A2A agents are dialled under the same egress and Secret rules as MCP servers,
	// each answer read up to its own limit.
	a2aOpts := mcptools.ManagerOptions(mgr.GetAPIReader(), egressPolicy)
	a2aOpts.Transport = egressPolicy.Transport(egress.ClientOptions{ExtraRootsFile: o.ownCA})
	a2aOpts.ReadLimit = int64(o.a2aReadLimit)
	remoteAgents := a2atools.NewClient(a2aOpts)
	// One budget ledger: the engine judges and charges every model call with it, the
	// SessionPolicy controller records its windows. It reads the informer cache only.
	ledger := budget.NewLedger(mgr.GetCache(), nil)
	// The store's memory indexer embeds on the append path: its spend is collected and
	// charged to the namespaces' windows, and held where a window is spent.
	if err := mgr.Add(&budget.IndexCharger{Gate: ledger, Store: store}); err != nil {
		return err
	}
	tools := turns.ToolSources{MCP: mcp, A2A: remoteAgents, WorkspaceRoot: o.workspaceRoot}
	var workspaces subagentrun.SandboxWorkspaces
	if o.sandboxes {
		// sandboxd binds its Pod's loopback: the manager gets there through the API server's
		// pods/portforward (internal/sandbox.PortForward).
		dial, err := sandbox.PortForward(mgr.GetConfig())
		if err != nil {
			return err
		}
		sandboxes, err := sandbox.NewSandboxes(ctx, mgr.GetClient(), mgr.GetCache(), mgr.GetAPIReader(), dial, clock.RealClock{})
		if err != nil {
			return err
		}
		tools.Sandboxes, workspaces = sandboxes, sandboxes
	}
	engine, err := turns.NewEngine(turns.Options{
		Client: mgr.GetClient(), Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Watcher: watcher,
		Store: store, Retired: store, MaxConcurrentTurns: o.maxTurns, MaxTurnsPerNamespace: o.maxTurnsPerNS, Recorder: events.GetEventRecorder("agent-runtime"),
		ModelAttemptTimeout: o.attemptTimeout, ModelIdleTimeout: o.idleTimeout, LiveReplies: o.liveReplies,
		Egress: egressPolicy, Budget: ledger, Approvals: approval.NewDesk(mgr.GetCache(), mgr.GetAPIReader(), mgr.GetClient()),
		Tools: tools,
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(engine); err != nil {
		return err
	}
	if err := mgr.Add(relabel(mgr, o.shard)); err != nil {
		return err
	}
	deliverer := delivery.New(egressPolicy)
	deliverer.Attempts = max(o.deliveryAttempts, 1)
	if err := controllers.SetupWithManager(mgr, controllers.Options{
		Runner: engine, Store: store, Retirer: store, WorkspaceRoot: o.workspaceRoot, Concurrency: o.concurrency, Events: events, MCP: mcp, A2A: remoteAgents,
		TTLAfterFinished: o.ttlAfterFinished, SessionStatusInterval: o.statusInterval, Deliverer: deliverer, Shard: o.shard,
		MCPProbeTimeout: o.mcpProbeTimeout, MCPProbesPerNamespace: o.mcpProbesPerNS, Budget: ledger, HookBaseURL: o.hookBaseURL,
		Sandbox: sandboxOptions(o), SandboxWorkspaces: workspaces,
	}); err != nil {
		return err
	}
	if !o.enableWebhooks {
		return nil
	}
	user, err := whoAmI(ctx, mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("learning the manager's own user (the one user that speaks for any session): %w", err)
	}
	return webhook.SetupWithManager(mgr, webhook.Options{ManagerUsername: user, ToolCreatesPerMinute: o.toolRate,
		Events: events.GetEventRecorder("admission"), Shard: o.shard})
}

// sandboxOptions are the controllers' sandbox options: nil unless --sandboxes.
func sandboxOptions(o options) *agent.SandboxOptions {
	if !o.sandboxes {
		return nil
	}
	return &agent.SandboxOptions{Image: o.sandboxImage}
}

// relabel stamps the shard's label on its namespaces' objects that lack it (made before the
// install was sharded, or under another count of shards) once this replica leads its
// shard: its informers select the label, so they would not see them otherwise.
func relabel(mgr ctrl.Manager, s shard.Shard) manager.RunnableFunc {
	return func(ctx context.Context) error {
		n, err := cacheindex.Relabel(ctx, mgr.GetClient(), mgr.GetAPIReader(), s)
		if err != nil {
			return fmt.Errorf("shard %s: %w", s, err)
		}
		ctrl.LoggerFrom(ctx).Info("shard label stamped", "shard", s.String(), "objects", n)
		return nil
	}
}

// whoAmI asks the API server who the manager is: the one user whose sends and spawns may
// speak for any session and carry the operator's annotations.
func whoAmI(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}

// transcriptClient talks to the sidecar over its unix socket, or loopback HTTP.
func transcriptClient(addr string) *transcriptclient.Client {
	if strings.HasPrefix(addr, "http://") {
		return transcriptclient.NewLoopbackClient(addr)
	}
	return transcriptclient.NewClient(addr)
}

// stringList is a repeatable string flag.
// byteSize is a flag of bytes written as a quantity (8Mi, 1048576).
type byteSize int64

func (b *byteSize) String() string {
	return resource.NewQuantity(int64(*b), resource.BinarySI).String()
}

func (b *byteSize) Set(v string) error {
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return fmt.Errorf("%q is not a positive quantity of bytes (8Mi, 1048576)", v)
	}
	*b = byteSize(q.Value())
	return nil
}

type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// registerMetrics registers the metrics the manager serves, each package's own (kueue's
// shape: a program says what it serves; no import registers anything by itself).
func registerMetrics(r prometheus.Registerer) {
	ownerflow.RegisterMetrics(r)
	sessionschedule.RegisterMetrics(r)
	toolapproval.RegisterMetrics(r)
	turns.RegisterMetrics(r)
	budget.RegisterMetrics(r)
	delivery.RegisterMetrics(r)
	eventrec.RegisterMetrics(r)
	sandbox.RegisterMetrics(r)
}

// The metrics filter asks the API server who a scraper is and whether it may get /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsOptions serves /metrics behind authentication and authorization, as the shipped
// ServiceMonitor scrapes it (HTTPS, the Prometheus ServiceAccount's bearer token, granted
// by the metrics-reader ClusterRole).
func metricsOptions(o options, tlsOpts []func(*tls.Config)) metricsserver.Options {
	m := metricsserver.Options{BindAddress: o.metricsAddr, TLSOpts: tlsOpts}
	if o.metricsSecure {
		m.SecureServing, m.CertDir = true, o.metricsCertDir
		m.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return m
}

// lameDuck is a context cancelled delay after parent is: a terminating Pod leaves its
// Services' endpoints when its deletion starts, but the API server can still reach it for a
// moment (kube-proxy's next sync), and an admission webhook that stopped at once would fail
// those requests.
func lameDuck(parent context.Context, delay time.Duration) context.Context {
	if delay <= 0 {
		return parent
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	go func() {
		<-parent.Done()
		t := time.NewTimer(delay)
		defer t.Stop()
		<-t.C
		cancel()
	}()
	return ctx
}
