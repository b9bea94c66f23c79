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

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

func init() {
	register("send", benchSend)
}

const (
	sendNS = "bench"
	// latencySends are the saturated sends measured: sendRounds rounds of roundSends,
	// each beside as many nulls.
	latencySends    = sendRounds * roundSends
	sendConcurrency = 20
	sustainFor      = 60 * time.Second
	cachedObjects   = 10000
)

var (
	sendGVR = sessionsv1alpha1.GroupVersion.WithResource("sessionsends")
	nullGVR = schema.GroupVersionResource{Group: "bench.agents.dev", Version: "v1", Resource: "nulls"}
)

// benchSend measures sends end to end on the local control plane, with the manager as its own
// process (as in the Pod), next to a null controller on the same API server.
func benchSend() ([]Figure, error) {
	ctx := context.Background()
	var mgrArgs []string
	if *profileDir != "" {
		mgrArgs = append(mgrArgs, "--pprof-bind-address="+pprofAddr())
	}
	c, cfg, cl, dyn, stop, err := sendCluster(ctx, "bench-send.log", mgrArgs)
	if err != nil {
		return nil, err
	}
	defer stop()

	var figs []Figure
	// Warm both paths (informers, connections, first turn) before measuring.
	if _, err := measureSends(ctx, dyn, 20, sendConcurrency, "warm"); err != nil {
		return nil, fmt.Errorf("warm-up sends: %w", err)
	}
	stopNull := runNullController(ctx, dyn)
	defer stopNull()
	if _, err := measureNulls(ctx, dyn, 20, sendConcurrency, "warm"); err != nil {
		return nil, fmt.Errorf("warm-up null: %w", err)
	}

	writesBefore, err := apiWrites(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rounds, err := runRounds(ctx, sendRounds, func(ctx context.Context, round int, ours bool) (roundResult, error) {
		return satRound(ctx, cfg, c, dyn, round, ours)
	})
	if err != nil {
		return nil, err
	}
	writesAfter, err := apiWrites(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The first round's stages and requests per send and per null, as the c=1 suite reads them.
	figs = append(append(figs, rounds.ours[0].figs...), rounds.null[0].figs...)
	p50 := func(r roundResult) float64 { return quantileMS(r.lat, 0.5) }
	p99 := func(r roundResult) float64 { return quantileMS(r.lat, 0.99) }
	cpu := func(comm string) func(r roundResult) float64 {
		return func(r roundResult) float64 { return r.cpu[comm] / float64(len(r.lat)) * 1000 }
	}
	figs = append(figs,
		rounds.compare("send_latency_p50_ms", p50, "ms", "ratio <= 2.5 at concurrency 20 (baseline: null controller, create + status update + watch)"),
		rounds.compare("send_latency_p99_ms", p99, "ms", "concurrency 20"),
		rounds.compare("cpu_ms_per_send", cpu("total"), "cpu-ms",
			"ratio <= 1.7 at concurrency 20, the median of three pairs of interleaved rounds (spread beside it); every process the bench started, on the machine's 2 cores; baseline: one null create + status update"),
	)
	for _, p := range cpuProcesses {
		figs = append(figs, rounds.compare("cpu_ms_per_send_"+p.figure, cpu(p.comm), "cpu-ms", ""))
	}
	for _, res := range res3 {
		n := writesAfter[res] - writesBefore[res]
		f := Figure{Name: "api_writes_per_send_" + res, Value: n / latencySends, Unit: "writes"}
		if res == "sessionsends" {
			f.Name, f.Target = "api_writes_per_send", "<= 3 without reply-back (client create included)"
		}
		figs = append(figs, f)
		if c := writesAfter[res+"/conflicts"] - writesBefore[res+"/conflicts"]; res == "sessionsends" {
			figs = append(figs, Figure{Name: "api_conflicts_per_send", Value: c / latencySends, Unit: "writes", Target: "409s, included in api_writes_per_send"})
		}
	}

	var plainWrites float64
	for _, res := range res3 {
		plainWrites += writesAfter[res] - writesBefore[res]
	}
	rbFigs, err := measureReplyBack(ctx, cfg, dyn, plainWrites)
	if err != nil {
		return nil, err
	}
	figs = append(figs, rbFigs...)

	cpu0 := processCPUSeconds(c.ManagerPID())
	apiHTTP, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	cpuProfile := "/debug/pprof/profile?seconds=" + strconv.Itoa(int(sustainFor.Seconds())-5)
	mgrProfiled := profile(http.DefaultClient, managerProfiler(), "manager-cpu-sustain.pprof", cpuProfile)
	apiProfiled := profile(apiHTTP, strings.TrimSuffix(cfg.Host, "/"), "apiserver-cpu-sustain.pprof", cpuProfile)
	done, err := sustainSends(ctx, dyn, sustainFor)
	<-mgrProfiled
	<-apiProfiled
	if err != nil {
		return nil, err
	}
	cpu1 := processCPUSeconds(c.ManagerPID())
	figs = append(figs,
		Figure{Name: "sends_per_second", Value: float64(done) / sustainFor.Seconds(), Unit: "sends/s", Target: "sustained 60 s"},
		Figure{Name: "manager_cpu_s_per_1000_sends", Value: (cpu1 - cpu0) / float64(done) * 1000, Unit: "cpu-s"},
	)

	if err := fillCache(ctx, cl, dyn); err != nil {
		return nil, err
	}
	// Let the manager settle (the last status writes; the Go runtime returns the memory the
	// drained backlog used at a paced rate) before reading its memory.
	time.Sleep(rssSettle)
	<-profile(http.DefaultClient, managerProfiler(), "manager-heap-10k.pprof", "/debug/pprof/heap")
	figs = append(figs, Figure{Name: "manager_rss_mib", Value: processRSSMiB(c.ManagerPID()), Unit: "MiB",
		Target: "< 150 with 10k sessions + 10k sends cached"})
	// What of it is live: the rest is the Go collector's headroom and memory not yet returned.
	if heap, err := managerHeapInuse(ctx, c.MetricsAddr, c.Token); err == nil {
		figs = append(figs, Figure{Name: "manager_heap_inuse_mib", Value: heap / (1 << 20), Unit: "MiB", Target: "live heap behind manager_rss_mib"})
	} else {
		fmt.Fprintln(os.Stderr, "bench: manager heap:", err)
	}
	return figs, nil
}

// settle is how long a measured window stays open after its last object is done.
const settle = 3 * time.Second

// cpuProcesses are the processes whose CPU per send the bench reports, by command name
// (truncated to 15 characters by the kernel) and figure name.
var cpuProcesses = []struct{ comm, figure string }{
	{"kube-apiserver", "kube_apiserver"}, {"etcd", "etcd"}, {"manager", "manager"},
	{"transcript-stor", "transcript_store"}, {"bench", "bench_client"},
}

// res3 are the resources whose writes a send causes.
var res3 = []string{"sessionsends", "agentsessions", "events"}

// replyBackSends is the batch that measures what a ping-pong turn costs.
const replyBackSends = 100

// measureReplyBack runs sends with reply-back (two ping-pong turns: the policy's bound) to
// their Completed condition and reports the API writes one ping-pong turn adds, from the
// plain sends' writes (plainWrites over latencySends).
func measureReplyBack(ctx context.Context, cfg *rest.Config, dyn dynamic.Interface, plainWrites float64) ([]Figure, error) {
	before, err := apiWrites(ctx, cfg)
	if err != nil {
		return nil, err
	}
	newRB := func(name string, worker int) *unstructured.Unstructured {
		u := newSend(name, worker)
		_ = unstructured.SetNestedField(u.Object, requesterKey(worker), "spec", "fromSessionKey")
		return u
	}
	if _, err := measure(ctx, dyn, sendGVR, replyBackSends, newRB, sendCompleted, "send-rb"); err != nil {
		return nil, fmt.Errorf("reply-back sends: %w", err)
	}
	after, err := apiWrites(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var rb float64
	for _, res := range res3 {
		rb += after[res] - before[res]
	}
	perTurn := (rb/replyBackSends - plainWrites/latencySends) / replyBackTurns
	return []Figure{
		{Name: "api_writes_per_send_replyback", Value: rb / replyBackSends, Unit: "writes", Target: "2 ping-pong turns, all resources, client create included"},
		{Name: "api_writes_per_pingpong_turn", Value: perTurn, Unit: "writes", Target: "all resources, over a send without reply-back"},
	}, nil
}

// replyBackTurns is the bench SessionPolicy's maxPingPongTurns.
const replyBackTurns = 2

func sendCompleted(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == sessionsv1alpha1.ConditionCompleted && m["status"] == string(metav1.ConditionTrue) {
			return true
		}
	}
	return false
}

// sendCluster starts a cluster with the send fixtures and the null CRD installed, and returns
// it with a fast client config, a client and a dynamic client for it.
func sendCluster(ctx context.Context, logName string, mgrArgs []string) (*devcluster.Cluster, *rest.Config, client.Client, dynamic.Interface, func(), error) {
	c, cfg, cl, dyn, stop, err := clusterClients(ctx, logName, mgrArgs, 500)
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	err = setupSendFixtures(ctx, cl)
	if err == nil {
		err = installNullCRD(ctx, cfg)
	}
	if err != nil {
		stop()
		return nil, nil, nil, nil, nil, err
	}
	return c, cfg, cl, dyn, stop, nil
}

// clusterClients starts a cluster and the bench's own clients of it, at qps (burst twice).
func clusterClients(ctx context.Context, logName string, mgrArgs []string, qps float32) (*devcluster.Cluster, *rest.Config, client.Client, dynamic.Interface, func(), error) {
	return clusterClientsWith(ctx, logName, devcluster.Options{ManagerArgs: mgrArgs}, qps)
}

// clusterClientsWith is clusterClients with the cluster's options: it builds the binaries
// and starts a local cluster logging to logName in the temp directory; stop ends it and
// removes what it made.
func clusterClientsWith(ctx context.Context, logName string, o devcluster.Options, qps float32) (*devcluster.Cluster, *rest.Config, client.Client, dynamic.Interface, func(), error) {
	c, stop, err := benchfig.StartCluster(ctx, logName, o)
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	cfg := clientConfig(c, qps)
	cl, dyn, err := benchClients(c, qps)
	if err != nil {
		stop()
		return nil, nil, nil, nil, nil, err
	}
	return c, cfg, cl, dyn, stop, nil
}

// clientConfig is the cluster's admin config at qps (burst twice that).
func clientConfig(c *devcluster.Cluster, qps float32) *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = qps, int(2*qps)
	return cfg
}

// benchClients are a typed and a dynamic admin client of the cluster at qps.
func benchClients(c *devcluster.Cluster, qps float32) (client.Client, dynamic.Interface, error) {
	cfg := clientConfig(c, qps)
	cl, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return nil, nil, err
	}
	return cl, dynamic.NewForConfigOrDie(cfg), nil
}

// setupSendFixtures creates the namespace, an Agent answering at once, and its main session.
func setupSendFixtures(ctx context.Context, cl client.Client) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(sendNS)
	if err := cl.Create(ctx, ns); err != nil {
		return err
	}
	agent := &sessionsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: sendNS},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
			{Match: "^Agent-to-agent announce step", Reply: sessionsv1alpha1.AnnounceSkip},
			{Match: ".", Reply: "ok"},
		}}},
	}
	// Reply-back sends come from a requester session of the same agent, which must see the
	// target (visibility all) and stops after two ping-pong turns. The A2A and MCP suites
	// send into one session through the doors back to back, which the door limits (a
	// backstop against loops, not what they measure) would stop: they get room.
	policy := &sessionsv1alpha1.SessionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: sendNS},
		Spec: sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityAll,
			AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{MaxPingPongTurns: ptr.To[int32](replyBackTurns)}, Budgets: benchBudgets(),
			Limits: &sessionsv1alpha1.ChainLimits{DoorSendsPerSession: ptr.To[int32](100000), DoorSendsPerCaller: ptr.To[int32](100000)}},
	}
	objs := []client.Object{agent, policy}
	for i := range sendConcurrency {
		for _, key := range []string{targetKey(i), requesterKey(i)} {
			objs = append(objs, &sessionsv1alpha1.AgentSession{
				ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: sendNS},
				Spec:       sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "bench", ChatType: sessionsv1alpha1.ChatTypeGroup},
			})
		}
	}
	for _, o := range objs {
		if err := cl.Create(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// waiter turns one namespace-wide watch into per-object completions, so both the send and the
// null path are observed the same way.
type waiter struct {
	mu      sync.Mutex
	pending map[string]chan struct{}
	done    func(*unstructured.Unstructured) bool
}

func startWaiter(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, done func(*unstructured.Unstructured) bool) (*waiter, func(), error) {
	w := &waiter{pending: map[string]chan struct{}{}, done: done}
	ctx, cancel := context.WithCancel(ctx)
	res := dyn.Resource(gvr).Namespace(sendNS)
	wi, err := res.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	go func() {
		for {
			for ev := range wi.ResultChan() {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					w.observe(u)
				}
			}
			// The API server closes a watch it finds too slow or too old: list what was
			// missed, then watch again from there.
			for ctx.Err() == nil {
				if wi, err = w.resume(ctx, res); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	// The watch ends with ctx.
	return w, cancel, nil
}

func (w *waiter) resume(ctx context.Context, res dynamic.ResourceInterface) (watch.Interface, error) {
	list, err := res.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		w.observe(&list.Items[i])
	}
	return res.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
}

func (w *waiter) observe(u *unstructured.Unstructured) {
	if !w.done(u) {
		return
	}
	w.mu.Lock()
	if ch, ok := w.pending[u.GetName()]; ok {
		close(ch)
		delete(w.pending, u.GetName())
	}
	w.mu.Unlock()
}

func (w *waiter) expect(name string) <-chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	w.pending[name] = ch
	w.mu.Unlock()
	return ch
}

// measure creates n objects at sendConcurrency and returns each create-to-done latency.
func measure(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, n int, newObj func(name string, worker int) *unstructured.Unstructured, done func(*unstructured.Unstructured) bool, prefix string) ([]time.Duration, error) {
	return measureAt(ctx, dyn, gvr, n, sendConcurrency, newObj, done, prefix)
}

// measureAt creates n objects from concurrency workers and returns each create-to-done latency.
func measureAt(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, n, concurrency int, newObj func(name string, worker int) *unstructured.Unstructured, done func(*unstructured.Unstructured) bool, prefix string) ([]time.Duration, error) {
	w, stop, err := startWaiter(ctx, dyn, gvr, done)
	if err != nil {
		return nil, err
	}
	defer stop()
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for worker := range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				name := fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), i)
				ch := w.expect(name)
				start := time.Now()
				if _, err := dyn.Resource(gvr).Namespace(sendNS).Create(ctx, newObj(name, worker), metav1.CreateOptions{}); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				select {
				case <-ch:
					lat[i] = time.Since(start)
				case <-time.After(60 * time.Second):
					errOnce.Do(func() {
						firstErr = fmt.Errorf("%s %s not done after 60s: %s", gvr.Resource, name, describe(ctx, dyn, gvr, name))
					})
					return
				}
			}
		})
	}
	wg.Wait()
	return lat, firstErr
}

// targetKey is the session a worker sends into. Each worker has its own: a session runs one
// turn at a time by design, and the figure is the operator's overhead, not a queue.
func targetKey(worker int) string {
	return "agent:bench:webchat:group:w" + strconv.Itoa(worker%sendConcurrency)
}

// requesterKey is the session a worker's reply-back sends come from.
func requesterKey(worker int) string {
	return "agent:bench:webchat:group:r" + strconv.Itoa(worker%sendConcurrency)
}

func newSend(name string, worker int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sessionsv1alpha1.GroupVersion.String(), "kind": "SessionSend",
		"metadata": map[string]any{"name": name, "namespace": sendNS},
		"spec":     map[string]any{"sessionKey": targetKey(worker), "message": "hello", "timeoutSeconds": int64(30)},
	}}
}

func sendOK(u *unstructured.Unstructured) bool {
	s, _, _ := unstructured.NestedString(u.Object, "status", "status")
	return s == string(sessionsv1alpha1.SendOK) || s == string(sessionsv1alpha1.SendError) || s == string(sessionsv1alpha1.SendTimeout)
}

func measureSends(ctx context.Context, dyn dynamic.Interface, n, concurrency int, prefix string) ([]time.Duration, error) {
	return measureAt(ctx, dyn, sendGVR, n, concurrency, newSend, sendOK, "send-"+prefix)
}

func measureNulls(ctx context.Context, dyn dynamic.Interface, n, concurrency int, prefix string) ([]time.Duration, error) {
	newNull := func(name string, _ int) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "bench.agents.dev/v1", "kind": "Null",
			"metadata": map[string]any{"name": name, "namespace": sendNS},
			"spec":     map[string]any{"message": "hello"},
		}}
	}
	done := func(u *unstructured.Unstructured) bool {
		s, _, _ := unstructured.NestedString(u.Object, "status", "status")
		return s == "ok"
	}
	return measureAt(ctx, dyn, nullGVR, n, concurrency, newNull, done, "null-"+prefix)
}

// sustainSends keeps sendConcurrency sends in flight for d and counts the completed ones.
func sustainSends(ctx context.Context, dyn dynamic.Interface, d time.Duration) (int, error) {
	w, stop, err := startWaiter(ctx, dyn, sendGVR, sendOK)
	if err != nil {
		return 0, err
	}
	defer stop()
	deadline := time.Now().Add(d)
	var count atomic.Int64
	var seq atomic.Int64
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for worker := range sendConcurrency {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				name := "sustain-" + strconv.FormatInt(seq.Add(1), 10)
				ch := w.expect(name)
				if _, err := dyn.Resource(sendGVR).Namespace(sendNS).Create(ctx, newSend(name, worker), metav1.CreateOptions{}); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				select {
				case <-ch:
					if time.Now().Before(deadline) {
						count.Add(1)
					}
				case <-time.After(60 * time.Second):
					errOnce.Do(func() {
						firstErr = fmt.Errorf("send %s not done after 60s: %s", name, describe(ctx, dyn, sendGVR, name))
					})
					return
				}
			}
		})
	}
	wg.Wait()
	return int(count.Load()), firstErr
}

// fillCache brings the namespace to cachedObjects AgentSessions and SessionSends, the sends
// fire-and-forget so the fill does not wait on turns.
func fillCache(ctx context.Context, cl client.Client, dyn dynamic.Interface) error {
	var sends unstructured.UnstructuredList
	sends.SetGroupVersionKind(sessionsv1alpha1.GroupVersion.WithKind("SessionSendList"))
	if err := cl.List(ctx, &sends, client.InNamespace(sendNS)); err != nil {
		return err
	}
	w, stop, err := startWaiter(ctx, dyn, sendGVR, sendCompleted)
	if err != nil {
		return err
	}
	defer stop()
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	var mu sync.Mutex
	var pending []<-chan struct{}
	haveSends := len(sends.Items)
	for range sendConcurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= cachedObjects {
					return
				}
				s := &sessionsv1alpha1.AgentSession{
					ObjectMeta: metav1.ObjectMeta{Name: "fill-" + strconv.Itoa(i), Namespace: sendNS},
					Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:bench:webchat:group:g" + strconv.Itoa(i), AgentID: "bench",
						Channel: "webchat", ChatType: sessionsv1alpha1.ChatTypeGroup, DisplayName: "group " + strconv.Itoa(i)},
				}
				if err := cl.Create(ctx, s); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				if i+haveSends < cachedObjects {
					send := newSend("fill-"+strconv.Itoa(i), i)
					_ = unstructured.SetNestedField(send.Object, int64(0), "spec", "timeoutSeconds")
					ch := w.expect(send.GetName())
					mu.Lock()
					pending = append(pending, ch)
					mu.Unlock()
					if _, err := dyn.Resource(sendGVR).Namespace(sendNS).Create(ctx, send, metav1.CreateOptions{}); err != nil {
						errOnce.Do(func() { firstErr = err })
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	// The figure is the cache of completed sends, not a backlog of turns: wait them out.
	deadline := time.After(fillDrainTimeout)
	for _, ch := range pending {
		select {
		case <-ch:
		case <-deadline:
			return fmt.Errorf("fill sends not all Completed after %s", fillDrainTimeout)
		}
	}
	return nil
}

// rssSettle is the quiet time before the manager's memory is read.
const rssSettle = 30 * time.Second

// fillDrainTimeout bounds the wait for the fill's fire-and-forget sends to complete.
const fillDrainTimeout = 5 * time.Minute

// installNullCRD installs the baseline's trivial kind: a spec, a status subresource, nothing else.
func installNullCRD(ctx context.Context, cfg *rest.Config) error {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "nulls.bench.agents.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "bench.agents.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "nulls", Singular: "null", Kind: "Null", ListKind: "NullList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", XPreserveUnknownFields: ptr.To(true)},
						"status": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
					},
				}},
			}},
		},
	}
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	if err := apiextensionsv1.AddToScheme(cl.Scheme()); err != nil {
		return err
	}
	if err := cl.Create(ctx, crd); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("null CRD not established after 30s")
}

// runNullController answers every new Null with one status update: the least a controller
// can do, and the baseline a send is compared with.
func runNullController(ctx context.Context, dyn dynamic.Interface) func() {
	ctx, cancel := context.WithCancel(ctx)
	work := make(chan *unstructured.Unstructured, 1024)
	go func() {
		for {
			wi, err := dyn.Resource(nullGVR).Namespace(sendNS).Watch(ctx, metav1.ListOptions{})
			if err != nil {
				return
			}
			for ev := range wi.ResultChan() {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Added {
					work <- u
				}
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	for range sendConcurrency {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case u := <-work:
					_ = unstructured.SetNestedField(u.Object, "ok", "status", "status")
					_, _ = dyn.Resource(nullGVR).Namespace(sendNS).UpdateStatus(ctx, u, metav1.UpdateOptions{})
				}
			}
		}()
	}
	return cancel
}

// managerHeapInuse reads go_memstats_heap_inuse_bytes from the manager's metrics endpoint
// (HTTPS with a self-signed certificate, a token allowed to get /metrics).
func managerHeapInuse(ctx context.Context, addr, token string) (float64, error) {
	fams, err := managerMetrics(ctx, addr, token)
	if err != nil {
		return 0, err
	}
	fam, ok := fams["go_memstats_heap_inuse_bytes"]
	if !ok || len(fam.GetMetric()) == 0 {
		return 0, errors.New("go_memstats_heap_inuse_bytes not in the manager's metrics")
	}
	return fam.GetMetric()[0].GetGauge().GetValue(), nil
}

// apiWrites reads the API server's own request counters: writes per resource of this API.
func apiWrites(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	fams, err := apiMetrics(ctx, cfg)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	fam, ok := fams["apiserver_request_total"]
	if !ok {
		return nil, errors.New("apiserver_request_total not found in /metrics")
	}
	for _, m := range fam.GetMetric() {
		labels := labelsOf(m)
		switch labels["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY":
		default:
			continue
		}
		if labels["group"] == sessionsv1alpha1.GroupVersion.Group || labels["resource"] == "events" {
			out[labels["resource"]] += m.GetCounter().GetValue()
			if labels["code"] == "409" { // counted above too: a refused write is still a request
				out[labels["resource"]+"/conflicts"] += m.GetCounter().GetValue()
			}
		}
	}
	return out, nil
}

func quantileMS(d []time.Duration, q float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1e3
}

// describe is an object's status, for a failure message.
func describe(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, name string) string {
	u, err := dyn.Resource(gvr).Namespace(sendNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	return fmt.Sprintf("status %v", st)
}
