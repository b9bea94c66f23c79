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
	"maps"
	"os"
	"os/exec"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
	"github.com/agent-sessions/agent-session-operator/test/cluster/harness"
)

// FiguresEnv names the file TestSandboxFigures writes its figures to, one JSON line each
// (benchfig's format); the bench's sandbox-pods suite sets it. Unset, the test skips: it
// is a measurement, not part of make test-cluster.
const FiguresEnv = "ASO_SANDBOX_FIGURES"

const (
	figuresNS = "sandbox-bench"
	// Samples of each kind: real Pods on a loaded 2-core machine take seconds each.
	warmSamples, coldSamples, resumeSamples, plainSamples = 10, 5, 5, 10
	execSamples                                           = 200
	warmPoolSize                                          = 2
)

// TestSandboxFigures times a sandbox's life on the real kubelet through the manager's own
// code (internal/sandbox.Sandboxes: claim, wait Ready, port-forward, sandboxd): a claim from
// a warm pool to the first `exec true` answered, a cold start (no warm sandbox), a resume
// of a suspended one, and `exec true` through the port-forward, beside a plain Pod of the
// same image and runtime started in the same run (create to Ready).
func TestSandboxFigures(t *testing.T) {
	out := os.Getenv(FiguresEnv)
	if out == "" {
		t.Skip(FiguresEnv + " is not set: the bench's sandbox-pods suite runs this")
	}
	// The controller-runtime client logs nothing worth a figure.
	ctrllog.SetLogger(logr.Discard())
	ctx := context.Background()
	installAgentSandbox(ctx, t)
	if o, err := cl.Kubectl(ctx, "apply", "--server-side", "-f", cl.RepoRoot+"/config/crd/bases"); err != nil {
		t.Fatalf("CRDs: %v\n%s", err, o)
	}
	runtime := ""
	if cl.GVisor() {
		apply(ctx, t, "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\nhandler: runsc\n")
		runtime = "gvisor"
	}
	sandboxPVsNamed(ctx, t, "bench-workspace", warmSamples*2+warmPoolSize+coldSamples+resumeSamples+4)
	apply(ctx, t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+figuresNS+"}\n")

	cfg, err := clientcmd.BuildConfigFromFlags("", cl.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	dial, err := sandbox.PortForward(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Acquire reads claims and Sandboxes from informers and waits on their events, as the
	// manager's does.
	informers, err := cache.New(cfg, cache.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	cached, err := client.New(cfg, client.Options{Scheme: scheme.New(), Cache: &client.CacheOptions{Reader: informers}})
	if err != nil {
		t.Fatal(err)
	}
	sbx, err := sandbox.NewSandboxes(ctx, cached, informers, c, dial, clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		t.Fatal("the informer cache did not sync")
	}

	warmAgent := benchAgent(ctx, t, c, "warm", warmPoolSize, runtime)
	coldAgent := benchAgent(ctx, t, c, "cold", 0, runtime)

	plain := plainPodStarts(ctx, t, c, runtime)
	warm := make([]time.Duration, 0, warmSamples)
	var bound []time.Duration
	warmPhases := map[sandbox.AcquirePhase][]time.Duration{}
	for i := range warmSamples {
		waitWarm(ctx, t, c, warmAgent)
		d, s, b, ph := timedAcquire(ctx, t, c, sbx, warmAgent, fmt.Sprintf("warm-%d", i))
		warm = append(warm, d)
		if b > 0 {
			bound = append(bound, b)
		}
		for p, at := range ph {
			warmPhases[p] = append(warmPhases[p], at)
		}
		// Released, so that claimed sandboxes do not pile up on the node as samples go.
		if err := sandbox.Release(ctx, c, s); err != nil {
			t.Fatal(err)
		}
	}
	cold := make([]time.Duration, 0, coldSamples)
	var sessions []*sessionsv1alpha1.AgentSession
	for i := range coldSamples {
		d, s, _, _ := timedAcquire(ctx, t, c, sbx, coldAgent, fmt.Sprintf("cold-%d", i))
		cold = append(cold, d)
		sessions = append(sessions, s)
	}
	resume := make([]time.Duration, 0, resumeSamples)
	for _, s := range sessions[:resumeSamples] {
		suspend(ctx, t, c, s)
		began := time.Now()
		cli, err := sbx.Acquire(ctx, coldAgent, s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Exec(ctx, []string{"true"}, ".", sandbox.DefaultExecTimeout, sandbox.MaxOutputBytes); err != nil {
			t.Fatal(err)
		}
		resume = append(resume, time.Since(began))
	}
	// exec true through the port-forward of a Ready sandbox, beside a fork and exec here.
	cli, err := sbx.Acquire(ctx, coldAgent, sessions[0])
	if err != nil {
		t.Fatal(err)
	}
	var viaPod, local []time.Duration
	for range execSamples {
		began := time.Now()
		if res, err := cli.Exec(ctx, []string{"true"}, ".", sandbox.DefaultExecTimeout, sandbox.MaxOutputBytes); err != nil || res.ExitCode != 0 {
			t.Fatalf("exec true: %v (exit %d)", err, res.ExitCode)
		}
		viaPod = append(viaPod, time.Since(began))
		began = time.Now()
		if err := exec.Command("true").Run(); err != nil {
			t.Fatal(err)
		}
		local = append(local, time.Since(began))
	}

	rt := "runtime " + runtime
	if runtime == "" {
		rt = "runtime runc (no gvisor RuntimeClass)"
	}
	plainNote := "baseline: a plain Pod of the same image and runtime, create to Ready, same run; " + rt
	figs := []benchfig.Figure{
		benchfig.Compare("sandbox_warm_claim_ms", q(warm, 0.5), q(plain, 0.5), "ms p50",
			"peer: 33 ms p50 to acquire a warm sandbox (cocoonstack); "+plainNote),
		benchfig.Compare("sandbox_warm_claim_p99_ms", q(warm, 0.99), q(plain, 0.99), "ms p99", plainNote),
		benchfig.Compare("sandbox_warm_claim_ready_ms", q(bound, 0.5), q(warm, 0.5), "ms p50",
			"agent-sandbox's share of a warm claim: the claim created to the claim Ready (watched every 5 ms beside the manager's code); baseline: sandbox_warm_claim_ms, the same samples; "+rt),
		// The warm claim's path, each phase from the Acquire call (which creates the claim),
		// p50 over the same samples: what agent-sandbox takes (to bound), what the manager's
		// cache, the API server's port-forward and sandboxd add after it.
		benchfig.Compare("sandbox_warm_claim_bound_ms", q(warmPhases[sandbox.PhaseBound], 0.5), q(warm, 0.5), "ms p50",
			"a warm claim: the claim created to its Sandbox named in the claim, as the manager's cache sees it; baseline: sandbox_warm_claim_ms; "+rt),
		benchfig.Compare("sandbox_warm_claim_ready_seen_ms", q(warmPhases[sandbox.PhaseReady], 0.5), q(warm, 0.5), "ms p50",
			"a warm claim: the claim created to claim and Sandbox Ready in the manager's cache; baseline: sandbox_warm_claim_ms; "+rt),
		benchfig.Compare("sandbox_warm_claim_connected_ms", q(warmPhases[sandbox.PhaseConnected], 0.5), q(warm, 0.5), "ms p50",
			"a warm claim: the claim created to the port-forward to its Pod connected; baseline: sandbox_warm_claim_ms; "+rt),
		benchfig.Compare("sandbox_warm_claim_serving_ms", q(warmPhases[sandbox.PhaseServing], 0.5), q(warm, 0.5), "ms p50",
			"a warm claim: the claim created to sandboxd's first answer (its health check); the rest to sandbox_warm_claim_ms is the first exec true; "+rt),
		{Name: "sandbox_plain_pod_start_ms", Value: q(plain, 0.5), Unit: "ms p50", Target: "a plain Pod, create to Ready; " + rt},
		benchfig.Compare("sandbox_cold_start_ms", q(cold, 0.5), q(plain, 0.5), "ms p50", "claim with no warm sandbox to the first exec answered (a new Sandbox, its workspace volume bound, its Pod started); "+plainNote),
		benchfig.Compare("sandbox_resume_ms", q(resume, 0.5), q(plain, 0.5), "ms p50", "a Suspended sandbox to the first exec answered (its Pod started again on the kept workspace); "+plainNote),
		benchfig.Compare("sandbox_exec_cluster_ms", q(viaPod, 0.5), q(local, 0.5), "ms p50", "exec true through the API server's port-forward to sandboxd in a real Pod; baseline: fork+exec of true here; "+rt),
		benchfig.Compare("sandbox_exec_cluster_p99_ms", q(viaPod, 0.99), q(local, 0.99), "ms p99", "as sandbox_exec_cluster_ms"),
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, fig := range figs {
		benchfig.Emit(f, fig)
		t.Logf("%s = %.1f %s (baseline %.1f)", fig.Name, fig.Value, fig.Unit, ptr.Deref(fig.Baseline, 0))
	}
}

func q(d []time.Duration, quantile float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s)-1) * quantile)
	return float64(s[i].Microseconds()) / 1000
}

// sandboxPVsNamed makes n local volumes named prefix-N for sandbox workspaces (the cluster
// has no provisioner), each directory owned by the sandbox's user.
func sandboxPVsNamed(ctx context.Context, t *testing.T, prefix string, n int) {
	t.Helper()
	var y string
	for i := range n {
		dir := fmt.Sprintf("%s/pv-%s-%d", cl.WorkDir, prefix, i)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 65532, 65532); err != nil {
			t.Fatal(err)
		}
		y += harness.LocalPVYAML(fmt.Sprintf("%s-%d", prefix, i), dir, "") + "---\n"
	}
	apply(ctx, t, y)
}

// benchAgent makes a sandboxed Agent's SandboxTemplate and SandboxWarmPool as the Agent
// controller would (sandbox.Template, sandbox.WarmPool), without the operator.
func benchAgent(ctx context.Context, t *testing.T, c client.Client, name string, pool int32, runtime string) *sessionsv1alpha1.Agent {
	t.Helper()
	a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: figuresNS},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}}}
	a.Spec.Sandbox.Enabled = true
	a.Spec.Sandbox.WarmPool = ptr.To(pool)
	if err := c.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{sandbox.Template(a, harness.SandboxRuntimeImage, runtime), sandbox.WarmPool(a)} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// waitWarm waits until the Agent's pool has a Ready sandbox waiting.
func waitWarm(ctx context.Context, t *testing.T, c client.Client, a *sessionsv1alpha1.Agent) {
	t.Helper()
	if err := harness.Poll(ctx, rolloutTimeout, "a warm sandbox of "+a.Name, func() error {
		pool := &sandboxextv1beta1.SandboxWarmPool{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: sandbox.Name(a)}, pool); err != nil {
			return err
		}
		if pool.Status.ReadyReplicas < 1 {
			return fmt.Errorf("readyReplicas %d", pool.Status.ReadyReplicas)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// timedAcquire makes a session and times its first tool call's path: claim, Ready, the first
// exec true answered; watched beside it, how long the claim took to be Ready (0 when the
// watch missed it); and when Acquire first reached each of its phases.
func timedAcquire(ctx context.Context, t *testing.T, c client.Client, sbx *sandbox.Sandboxes, a *sessionsv1alpha1.Agent, name string) (time.Duration, *sessionsv1alpha1.AgentSession, time.Duration, map[sandbox.AcquirePhase]time.Duration) {
	t.Helper()
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: figuresNS},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:" + a.Name + ":" + name, AgentID: a.Name, Sandboxed: true}}
	if err := c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	phases := map[sandbox.AcquirePhase]time.Duration{}
	var began time.Time
	actx, cancel := context.WithTimeout(sandbox.WithPhases(ctx, func(p sandbox.AcquirePhase) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := phases[p]; !ok {
			phases[p] = time.Since(began)
		}
	}), rolloutTimeout)
	defer cancel()
	began = time.Now()
	readyAt := make(chan time.Duration, 1)
	wctx, stopWatch := context.WithCancel(actx)
	defer stopWatch()
	go func() {
		key := client.ObjectKey{Namespace: s.Namespace, Name: sandbox.ClaimName(s)}
		claim := &sandboxextv1beta1.SandboxClaim{}
		_ = pollFast(wctx, rolloutTimeout, func() (bool, error) {
			if err := c.Get(wctx, key, claim); err != nil {
				return false, err
			}
			for _, cond := range claim.Status.Conditions {
				if cond.Type == string(sandboxv1beta1.SandboxConditionReady) && cond.Status == metav1.ConditionTrue {
					readyAt <- time.Since(began)
					return true, nil
				}
			}
			return false, nil
		})
	}()
	cli, err := sbx.Acquire(actx, a, s)
	if err != nil {
		t.Fatalf("acquire %s: %v", name, err)
	}
	if res, err := cli.Exec(actx, []string{"true"}, ".", sandbox.DefaultExecTimeout, sandbox.MaxOutputBytes); err != nil || res.ExitCode != 0 {
		t.Fatalf("exec true in %s: %v (exit %d)", name, err, res.ExitCode)
	}
	total := time.Since(began)
	var ready time.Duration
	select {
	case ready = <-readyAt:
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	return total, s, ready, maps.Clone(phases)
}

// suspend suspends a session's sandbox and waits until its Pod is gone.
func suspend(ctx context.Context, t *testing.T, c client.Client, s *sessionsv1alpha1.AgentSession) {
	t.Helper()
	claim := &sandboxextv1beta1.SandboxClaim{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: sandbox.ClaimName(s)}, claim); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.BoundSandbox(ctx, c, claim)
	if err != nil || sb == nil {
		t.Fatalf("the Sandbox of %s: %v", s.Name, err)
	}
	pod := sb.Annotations[sandboxv1beta1.SandboxPodNameAnnotation]
	if pod == "" {
		pod = sb.Name
	}
	if err := sandbox.SetMode(ctx, c, sb, sandboxv1beta1.SandboxOperatingModeSuspended); err != nil {
		t.Fatal(err)
	}
	if err := harness.Poll(ctx, rolloutTimeout, "the Pod of "+s.Name+" gone", func() error {
		err := c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: pod}, &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	}); err != nil {
		t.Fatal(err)
	}
}

// plainPodStarts times plain Pods of the sandbox image and runtime from create to Ready,
// one after another, each deleted after.
func plainPodStarts(ctx context.Context, t *testing.T, c client.Client, runtime string) []time.Duration {
	t.Helper()
	var out []time.Duration
	for i := range plainSamples {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("plain-%d", i), Namespace: figuresNS},
			Spec: corev1.PodSpec{
				AutomountServiceAccountToken: ptr.To(false),
				Containers: []corev1.Container{{Name: "sandbox", Image: harness.SandboxRuntimeImage,
					Args: []string{"--root-dir=/tmp"}}},
			}}
		if runtime != "" {
			p.Spec.RuntimeClassName = ptr.To(runtime)
		}
		began := time.Now()
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := pollFast(ctx, rolloutTimeout, func() (bool, error) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return false, err
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		}); err != nil {
			t.Fatalf("plain Pod %s: %v", p.Name, err)
		}
		out = append(out, time.Since(began))
		if err := c.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// pollFast polls done every 10 ms (a Pod's start is the figure: a coarse poll would add to it).
func pollFast(ctx context.Context, timeout time.Duration, done func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := done()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not done after %s (last error: %v)", timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
