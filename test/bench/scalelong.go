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
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

func init() {
	registerExplicit("scale-long", benchScaleLong)
}

// scaleLongShort runs the scale-long suite unit-sized (scaleLongShortPlan): its whole code
// path in a minute or two, for its test and a quick look; the figures then say little.
var scaleLongShort = flag.Bool("scale-long-short", false, "run the scale-long suite unit-sized (a few hundred sessions), to exercise its code path")

const scaleLongNS = "bench-scale-long"

// scaleLongArchivedRetention is the store's archived-transcript retention in the life's
// compressed time: at its pace (about 35 retirements a second) it keeps about 30,000
// records, as 30 days of a thousand retirements a day do.
const scaleLongArchivedRetention = 15 * time.Minute

var subagentRunGVR = sessionsv1alpha1.GroupVersion.WithResource("subagentruns")

// scaleLongPlan is the life the scale-long suite plays: a live set of Live sessions, grown
// Step at a time, then kept at Live while Created sessions in all come and go, Step at a
// time (the oldest Step archived, then deleted by retention, and Step new ones created);
// a reading every ReadEvery created.
type scaleLongPlan struct {
	Live, Created, Step, ReadEvery int
}

// scaleLongDefault is a team over months: 10,000 live sessions, 300,000 created in all
// (a thousand spawns and sessions a day for ten months). It needs the machine alone: hours.
var scaleLongDefault = scaleLongPlan{Live: 10000, Created: 300000, Step: 5000, ReadEvery: 50000}

// scaleLongShortPlan is the unit-sized run (-scale-long-short and the suite's test).
var scaleLongShortPlan = scaleLongPlan{Live: 40, Created: 120, Step: 20, ReadEvery: 40}

// scaleLongPlanFromEnv is the default plan, or -scale-long-short's, with BENCH_SCALE_LONG_LIVE,
// _CREATED, _STEP and _READ_EVERY in its place when set.
func scaleLongPlanFromEnv() scaleLongPlan {
	p := scaleLongDefault
	if *scaleLongShort {
		p = scaleLongShortPlan
	}
	if n, err := strconv.Atoi(os.Getenv("BENCH_SCALE_LONG_LIVE")); err == nil && n > 0 {
		p.Live = n
	}
	if n, err := strconv.Atoi(os.Getenv("BENCH_SCALE_LONG_CREATED")); err == nil && n > 0 {
		p.Created = n
	}
	if n, err := strconv.Atoi(os.Getenv("BENCH_SCALE_LONG_STEP")); err == nil && n > 0 {
		p.Step = n
	}
	if n, err := strconv.Atoi(os.Getenv("BENCH_SCALE_LONG_READ_EVERY")); err == nil && n > 0 {
		p.ReadEvery = n
	}
	return p.normalized()
}

// normalized keeps the plan's counts whole multiples of its step, Created at least Live.
func (p scaleLongPlan) normalized() scaleLongPlan {
	p.Step = max(1, min(p.Step, p.Live))
	p.Live = max(p.Step, p.Live-p.Live%p.Step)
	p.Created = max(p.Live, p.Created-p.Created%p.Step)
	if p.ReadEvery <= 0 {
		p.ReadEvery = p.Live
	}
	return p
}

// controlPlaneReading is what the control plane holds at one moment of the life.
type controlPlaneReading struct {
	Live, Created                  int
	APIServerMiB, EtcdMiB          float64
	EtcdDBMiB, EtcdDBInUseMiB      float64
	ManagerMiB, TranscriptStoreMiB float64
	// APIServerHeapMiB is the API server's heap in use (go_memstats_heap_inuse_bytes): its
	// live objects and the garbage not yet collected, without the memory the runtime holds
	// free, which its resident set counts after a burst.
	APIServerHeapMiB float64
	// ManagerHeapMiB is the manager's heap in use: its resident set also keeps what a burst
	// freed and the runtime has not returned, which a leak and a burst both look like.
	ManagerHeapMiB float64
}

func (r controlPlaneReading) String() string {
	return fmt.Sprintf("%d live / %d created: kube-apiserver %.1f MiB (heap in use %.1f), etcd %.1f MiB, etcd db %.1f MiB (%.1f in use), manager %.1f MiB (heap in use %.1f), transcript-store %.1f MiB",
		r.Live, r.Created, r.APIServerMiB, r.APIServerHeapMiB, r.EtcdMiB, r.EtcdDBMiB, r.EtcdDBInUseMiB, r.ManagerMiB, r.ManagerHeapMiB, r.TranscriptStoreMiB)
}

// benchScaleLong plays scaleLongPlan on one namespace: sessions, each with a send to it
// (cancelled, deleted on finishing by its ttlSecondsAfterFinished 0, as the sends and the
// runs of a day go), the oldest archived, then deleted by the namespace's SessionPolicy
// retention (archivedSessionsSeconds 0: the retention controller, its records in the
// store). Each step also spawns real SubagentRuns (a scripted model turn and an announce
// each, cleanup keep, ttlSecondsAfterFinished 0): the run's TTL orphans its kept child,
// which is archived (its archive-at hour brought forward) and retired the same way. It reads
// the API server's, etcd's and our processes' memory and etcd's database size empty, at Live
// live / Live created, every ReadEvery created, and at Live live / Created created, the first
// and the last also on a restarted API server, and states the last against the first: a
// control plane that grows with what was ever done, not with what lives, shows.
func benchScaleLong() ([]Figure, error) {
	ctx := context.Background()
	plan := scaleLongPlanFromEnv()
	o := withProfilers(scaleCluster(nil))
	// The suite plays months in an hour: the API server's own time windows are compressed
	// with it, else they hold an hour of compressed churn that months in real time spread
	// thin (an Event lives an hour; etcd keeps five minutes of revisions until compacted).
	o.APIServerFlags = map[string]string{"event-ttl": "2m", "etcd-compaction-interval": "1m"}
	// The store's too: a retired session's record (and its archived transcript) lives 30 days
	// by default, a month of a team's retirements; the life retires 300,000 in a few hours,
	// past the store's 100,000 records a namespace, where retention keeps the objects.
	o.StoreArgs = append(o.StoreArgs, "--archived-transcript-retention="+scaleLongArchivedRetention.String())
	c, cfg, cl, dyn, stop, err := clusterClientsWith(ctx, "bench-scale-long.log", o, 1000)
	if err != nil {
		return nil, err
	}
	defer stop()
	// The counters' watches end before the cluster stops (deferred calls run last first).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scaleLongNS}}); err != nil {
		return nil, err
	}
	w, err := watchScaleLong(ctx, dyn)
	if err != nil {
		return nil, err
	}
	if err := setUpScaleLong(ctx, cl); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "bench: scale-long: %d live, %d created in all, %d at a time\n", plan.Live, plan.Created, plan.Step)

	apiHTTP, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	settle := rssSettle
	if *scaleLongShort {
		settle = time.Second
	}
	read := func(live, created int, tag string) (controlPlaneReading, error) {
		// Every reading alike: the API server collects its garbage first (pprof's gc=1), so
		// a reading right after a burst of creates and one after a long wait compare.
		if err := apiServerGC(ctx, apiHTTP, cfg.Host); err != nil {
			return controlPlaneReading{}, err
		}
		time.Sleep(settle)
		r, err := readControlPlane(ctx, c, cfg, live, created)
		if err == nil {
			fmt.Fprintln(os.Stderr, "bench: scale-long:"+tag, r)
		}
		// With -profile-dir, what each heap holds at each reading; the store's and the
		// manager's after a collection, as their resident sets keep a burst's peak.
		at := fmt.Sprintf("-%s-live-%s-created%s.pprof", kilo(live), kilo(created), strings.ReplaceAll(tag, " ", "-"))
		<-profile(apiHTTP, strings.TrimSuffix(cfg.Host, "/"), "apiserver-heap"+at, "/debug/pprof/heap")
		<-profile(http.DefaultClient, "http://"+storePprofAddr(), "store-heap"+at, "/debug/pprof/heap?gc=1")
		<-profile(http.DefaultClient, managerProfiler(), "manager-heap"+at, "/debug/pprof/heap?gc=1")
		// Every allocation since the store's start, by where it was made: what its resident
		// set's peaks between readings come from.
		<-profile(http.DefaultClient, "http://"+storePprofAddr(), "store-allocs"+at, "/debug/pprof/allocs")
		return r, err
	}
	empty, err := read(0, 0, "")
	if err != nil {
		return nil, err
	}
	waitTimeout := 15 * time.Minute
	created, retired, spawned := 0, 0, 0
	var rd scaleLongReadings
	rd.empty = empty
	for created < plan.Created {
		if created >= plan.Live {
			// The oldest Step sessions reach their end: archived, then gone by retention.
			if err := archiveScaleLong(ctx, cl, retired, retired+plan.Step); err != nil {
				return nil, err
			}
			retired += plan.Step
		}
		if err := createScaleLong(ctx, cl, created, created+plan.Step); err != nil {
			return nil, err
		}
		created += plan.Step
		// A day's spawns: each run's child, kept and orphaned by the run's TTL, reaches its
		// archive hour and is retired.
		n := plan.spawnsPerStep()
		if err := spawnScaleLong(ctx, cl, spawned, spawned+n); err != nil {
			return nil, err
		}
		spawned += n
		if err := w.waitStep(ctx, cl, created, retired, spawned, waitTimeout); err != nil {
			return nil, err
		}
		live := created - retired
		if err := waitStepGone(ctx, dyn, live, waitTimeout); err != nil {
			return nil, err
		}
		if created == plan.Live || created == plan.Created || created%plan.ReadEvery == 0 {
			r, err := read(live, created, "")
			if err != nil {
				return nil, err
			}
			rd.last = r
			if created == plan.Live {
				rd.first = r
				if err := saveSessionObject(ctx, dyn); err != nil {
					return nil, err
				}
				if rd.firstRestarted, err = readRestarted(ctx, c, dyn, w, r, waitTimeout, read); err != nil {
					return nil, err
				}
			}
		}
	}
	fmt.Fprintf(os.Stderr, "bench: scale-long: %d sessions and %d spawned runs created, %d sessions retired by retention\n", created, spawned, retired+spawned)
	rd.lastRestarted = rd.firstRestarted
	if rd.last.Created > rd.first.Created {
		if rd.lastRestarted, err = readRestarted(ctx, c, dyn, w, rd.last, waitTimeout, read); err != nil {
			return nil, err
		}
	}
	return scaleLongFigures(plan, rd), nil
}

// scaleLongWatch counts, from watches, what the life's steps wait for.
type scaleLongWatch struct {
	ready, archived, runsDone *counter
	children                  kidsDone // of finished runs, not yet archived
}

func watchScaleLong(ctx context.Context, dyn dynamic.Interface) (*scaleLongWatch, error) {
	w := &scaleLongWatch{}
	var err error
	if w.ready, err = countWhere(ctx, dyn, sessionGVR, scaleLongNS, statusSet("sessionId")); err != nil {
		return nil, err
	}
	if w.archived, err = countWhere(ctx, dyn, sessionGVR, scaleLongNS, func(u *unstructured.Unstructured) bool {
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return phase == string(sessionsv1alpha1.SessionArchived)
	}); err != nil {
		return nil, err
	}
	w.runsDone, err = countWhere(ctx, dyn, subagentRunGVR, scaleLongNS, func(u *unstructured.Unstructured) bool {
		if !statusSet("completedAt")(u) {
			return false
		}
		child, _, _ := unstructured.NestedString(u.Object, "status", "childSessionKey")
		w.children.add(child)
		return true
	})
	return w, err
}

// waitStep waits until a step's runs have finished (their kept children are then archived),
// its sessions are initialized and the sessions it ended are archived.
func (w *scaleLongWatch) waitStep(ctx context.Context, cl client.Client, created, retired, spawned int, timeout time.Duration) error {
	if err := w.runsDone.wait(spawned, timeout); err != nil {
		return fmt.Errorf("runs finished: %w", err)
	}
	if err := archiveChildren(ctx, cl, w.children.take()); err != nil {
		return err
	}
	// The requester's session and every child count as initialized sessions too.
	if err := w.ready.wait(1+created+spawned, timeout); err != nil {
		return fmt.Errorf("sessions initialized: %w", err)
	}
	if err := w.archived.wait(retired+spawned, timeout); err != nil {
		return fmt.Errorf("sessions archived: %w", err)
	}
	return nil
}

// waitStepGone waits until what a step ended is gone: the sessions retention deletes (the
// requester's session stays), and every finished send, deleted by its TTL, so that a reading
// holds the life's history and not a backlog.
func waitStepGone(ctx context.Context, dyn dynamic.Interface, live int, timeout time.Duration) error {
	if err := waitLive(ctx, dyn, 1+live, timeout); err != nil {
		return err
	}
	return waitObjects(ctx, dyn, sendGVR, scaleLongNS, 0, timeout, time.Second)
}

// readRestarted reads the same live set on a restarted API server: its watch caches hold the
// live objects alone, not the last burst's history (every version of every session and send
// of the last events, up to the caches' capacity), as a cluster whose sessions came over
// weeks holds them. The suite's counters then list again and watch the new server.
func readRestarted(ctx context.Context, c *devcluster.Cluster, dyn dynamic.Interface, w *scaleLongWatch, last controlPlaneReading, timeout time.Duration,
	read func(live, created int, tag string) (controlPlaneReading, error)) (controlPlaneReading, error) {
	if err := c.RestartAPIServer(); err != nil {
		return controlPlaneReading{}, err
	}
	for _, cn := range []*counter{w.ready, w.archived, w.runsDone} {
		cn.rewatch()
	}
	if err := waitLive(ctx, dyn, 1+last.Live, timeout); err != nil {
		return controlPlaneReading{}, fmt.Errorf("after the API server's restart: %w", err)
	}
	return read(last.Live, last.Created, " after a restart")
}

// spawnsPerStep is how many SubagentRuns a step spawns: one for every hundred sessions, at
// most the requester Agent's maxChildren (100) at a time.
func (p scaleLongPlan) spawnsPerStep() int { return min(100, max(2, p.Step/100)) }

const scaleLongRequester = "agent:main:main"

// setUpScaleLong gives the namespace what its life needs: a SessionPolicy whose retention
// deletes a session's object once archived, a requester's Agent and main session, and the
// Agent its runs spawn, both with instant scripted models.
func setUpScaleLong(ctx context.Context, cl client.Client) error {
	objs := []client.Object{
		&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: scaleLongNS},
			Spec: sessionsv1alpha1.SessionPolicySpec{Retention: &sessionsv1alpha1.RetentionSpec{ArchivedSessionsSeconds: ptr.To[int32](0)}}},
		&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "main", Namespace: scaleLongNS},
			Spec: sessionsv1alpha1.AgentSpec{Subagents: sessionsv1alpha1.SubagentsSpec{AllowAgents: []string{"research"}, MaxChildren: ptr.To[int32](100)},
				Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
					{Match: "^Sub-agent announce step", Reply: sessionsv1alpha1.AnnounceSkip}, {Match: ".", Reply: "ok"}}}}},
		&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: scaleLongNS},
			Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
				{Match: ".", Reply: "found it"}}}}},
		&sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(scaleLongRequester), Namespace: scaleLongNS},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: scaleLongRequester, AgentID: "main"}},
	}
	for _, o := range objs {
		if err := createRetrying(ctx, cl, o); err != nil {
			return err
		}
	}
	return nil
}

// spawnScaleLong creates runs [from, to): the requester's spawns, children kept, each run
// deleted as soon as it finishes.
func spawnScaleLong(ctx context.Context, cl client.Client, from, to int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := from; i < to; i++ {
		g.Go(func() error {
			return createRetrying(gctx, cl, &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Name: "spawn-" + strconv.Itoa(i), Namespace: scaleLongNS},
				Spec: sessionsv1alpha1.SubagentRunSpec{Task: "look " + strconv.Itoa(i), AgentID: "research", RequesterSessionKey: scaleLongRequester,
					Cleanup: sessionsv1alpha1.CleanupKeep, TTLSecondsAfterFinished: ptr.To[int32](0)}})
		})
	}
	return g.Wait()
}

// kidsDone are the keys of children whose runs finished, not yet archived.
type kidsDone struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (k *kidsDone) add(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys == nil {
		k.keys = map[string]bool{}
	}
	if key != "" {
		k.keys[key] = true
	}
}

// take returns the keys gathered so far and forgets them; a run seen twice adds its
// child's key again, and archiving a child twice is harmless.
func (k *kidsDone) take() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := make([]string, 0, len(k.keys))
	for key := range k.keys {
		keys = append(keys, key)
	}
	k.keys = nil
	return keys
}

// archiveChildren brings the kept children's archive hour to now.
func archiveChildren(ctx context.Context, cl client.Client, keys []string) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		sessionsv1alpha1.ArchiveAtAnnotation: time.Now().UTC().Format(time.RFC3339)}}})
	for _, key := range keys {
		s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: scaleLongNS}}
		if err := client.IgnoreNotFound(cl.Patch(ctx, s, client.RawPatch(types.MergePatchType, patch))); err != nil {
			return err
		}
	}
	return nil
}

// scaleLongReadings are the life's readings the figures state: empty, at Live live / Live
// created (first) and at the end (last), each of the two also on a restarted API server.
type scaleLongReadings struct {
	empty, first, last            controlPlaneReading
	firstRestarted, lastRestarted controlPlaneReading
}

// scaleLongFigures state the life's last reading against its first (Live live / Live
// created), both as read after the last step's burst and on a restarted API server, and the
// API server's growth from empty to Live sessions, per 10,000.
func scaleLongFigures(plan scaleLongPlan, rd scaleLongReadings) []Figure {
	empty, first, last := rd.empty, rd.first, rd.last
	at := func(r controlPlaneReading) string {
		return fmt.Sprintf("%s live / %s created", kilo(r.Live), kilo(r.Created))
	}
	target := "ratio <= 1.15: at " + at(last) + "; baseline: at " + at(first)
	restartedTarget := "ratio <= 1.15: on a restarted API server (its watch caches without the last burst's history) at " + at(rd.lastRestarted) + "; baseline: the same at " + at(rd.firstRestarted)
	restarted := rd.firstRestarted
	perTenK := func(v float64) float64 { return v / float64(plan.Live) * 10000 }
	return []Figure{
		Compare("scale_long_apiserver_rss_mib", last.APIServerMiB, first.APIServerMiB, "MiB", target),
		Compare("scale_long_apiserver_rss_restarted_mib", rd.lastRestarted.APIServerMiB, rd.firstRestarted.APIServerMiB, "MiB", restartedTarget),
		Compare("scale_long_apiserver_heap_restarted_mib", rd.lastRestarted.APIServerHeapMiB, rd.firstRestarted.APIServerHeapMiB, "MiB", restartedTarget),
		Compare("scale_long_etcd_rss_mib", last.EtcdMiB, first.EtcdMiB, "MiB", target),
		Compare("scale_long_etcd_db_in_use_mib", last.EtcdDBInUseMiB, first.EtcdDBInUseMiB, "MiB", target+" (what the API server's compaction keeps)"),
		Compare("scale_long_etcd_db_mib", last.EtcdDBMiB, first.EtcdDBMiB, "MiB",
			"the database file at "+at(last)+"; baseline: at "+at(first)+" (compaction frees pages for reuse; only a defragmentation gives them back)"),
		Compare("scale_long_manager_rss_mib", last.ManagerMiB, first.ManagerMiB, "MiB", "at "+at(last)+"; baseline: at "+at(first)),
		Compare("scale_long_manager_heap_mib", last.ManagerHeapMiB, first.ManagerHeapMiB, "MiB", "its heap in use at "+at(last)+"; baseline: at "+at(first)),
		Compare("scale_long_transcript_store_rss_mib", last.TranscriptStoreMiB, first.TranscriptStoreMiB, "MiB", "at "+at(last)+"; baseline: at "+at(first)),
		{Name: "apiserver_rss_per_10k_sessions_mib", Value: perTenK(first.APIServerMiB - empty.APIServerMiB), Unit: "MiB",
			Target: fmt.Sprintf("<= 270 (today 538): from empty (%.1f MiB) to %s live sessions with a send each, per 10,000", empty.APIServerMiB, kilo(first.Live))},
		{Name: "apiserver_heap_per_10k_sessions_mib", Value: perTenK(first.APIServerHeapMiB - empty.APIServerHeapMiB), Unit: "MiB",
			Target: fmt.Sprintf("the API server's heap in use, the same way (%.1f MiB empty): what its resident set holds beyond it is the create burst's garbage and free memory not yet returned", empty.APIServerHeapMiB)},
		{Name: "apiserver_rss_per_10k_live_sessions_mib", Value: perTenK(restarted.APIServerMiB - empty.APIServerMiB), Unit: "MiB",
			Target: fmt.Sprintf("%s live sessions on a restarted API server (%.1f MiB at %s created): the live objects alone, without the last burst's history in its watch caches", kilo(restarted.Live), restarted.APIServerMiB, kilo(restarted.Created))},
		{Name: "apiserver_heap_per_10k_live_sessions_mib", Value: perTenK(restarted.APIServerHeapMiB - empty.APIServerHeapMiB), Unit: "MiB",
			Target: "its heap in use, the same way"},
		{Name: "etcd_rss_per_10k_sessions_mib", Value: perTenK(first.EtcdMiB - empty.EtcdMiB), Unit: "MiB",
			Target: fmt.Sprintf("from empty (%.1f MiB) to %s live sessions, per 10,000", empty.EtcdMiB, kilo(first.Live))},
	}
}

// kilo is n as the figures' targets say it: 300k, or 40 below a thousand.
func kilo(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// scaleLongKey is the i-th session's key.
func scaleLongKey(i int) string { return "agent:bench:webchat:group:s" + strconv.Itoa(i) }

// createScaleLong creates sessions [from, to) and one send into each, cancelled, that its
// ttlSecondsAfterFinished 0 deletes as soon as it finishes.
func createScaleLong(ctx context.Context, cl client.Client, from, to int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(64)
	for i := from; i < to; i++ {
		g.Go(func() error {
			key := scaleLongKey(i)
			s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: scaleLongNS},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "bench", Channel: "webchat", ChatType: sessionsv1alpha1.ChatTypeGroup}}
			if err := createRetrying(gctx, cl, s); err != nil {
				return err
			}
			return createRetrying(gctx, cl, &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "long-" + strconv.Itoa(i), Namespace: scaleLongNS},
				Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: "hello " + strconv.Itoa(i), TimeoutSeconds: ptr.To[int32](0),
					Cancel: true, TTLSecondsAfterFinished: ptr.To[int32](0)}})
		})
	}
	return g.Wait()
}

// archiveScaleLong asks sessions [from, to) to archive now, as a kept child's archive-at
// annotation does when its hour is up.
func archiveScaleLong(ctx context.Context, cl client.Client, from, to int) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		sessionsv1alpha1.ArchiveAtAnnotation: time.Now().UTC().Format(time.RFC3339)}}})
	return forEachScaleLong(ctx, from, to, func(ctx context.Context, obj *sessionsv1alpha1.AgentSession) error {
		return cl.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
	})
}

func forEachScaleLong(ctx context.Context, from, to int, do func(context.Context, *sessionsv1alpha1.AgentSession) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(64)
	for i := from; i < to; i++ {
		g.Go(func() error {
			obj := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(scaleLongKey(i)), Namespace: scaleLongNS}}
			return do(gctx, obj)
		})
	}
	return g.Wait()
}

// waitLive waits until the namespace holds at most live sessions (retention's deletes are
// immediate: sessions carry no finalizer), counted by the API server.
func waitLive(ctx context.Context, dyn dynamic.Interface, live int, timeout time.Duration) error {
	return waitSessions(ctx, dyn, scaleLongNS, live, timeout, time.Second)
}

// waitSessions waits until namespace ns holds at most live sessions, asking the API server
// every interval.
func waitSessions(ctx context.Context, dyn dynamic.Interface, ns string, live int, timeout, every time.Duration) error {
	return waitObjects(ctx, dyn, sessionGVR, ns, live, timeout, every)
}

// waitObjects waits until the namespace holds at most n objects of gvr, counted by the API
// server.
func waitObjects(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, live int, timeout, every time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		list, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil && !apierrors.IsTooManyRequests(err) {
			return err
		}
		if err == nil {
			n := len(list.Items)
			if r := list.GetRemainingItemCount(); r != nil {
				n += int(*r)
			}
			if n <= live {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%d %s after %s, want at most %d", n, gvr.Resource, timeout, live)
			}
		}
		time.Sleep(every)
	}
}

// apiServerGC asks the API server to collect its garbage: its heap profile with gc=1 runs
// one first.
func apiServerGC(ctx context.Context, hc *http.Client, host string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(host, "/")+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("the API server's GC: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the API server's GC: %s", resp.Status)
	}
	return nil
}

// readControlPlane reads every process's resident memory and etcd's database size.
func readControlPlane(ctx context.Context, c *devcluster.Cluster, cfg *rest.Config, live, created int) (controlPlaneReading, error) {
	r := controlPlaneReading{Live: live, Created: created,
		APIServerMiB: processRSSMiB(childPID("kube-apiserver")), EtcdMiB: processRSSMiB(childPID("etcd")),
		ManagerMiB: processRSSMiB(c.ManagerPID()), TranscriptStoreMiB: processRSSMiB(c.StorePID())}
	fams, err := apiMetrics(ctx, cfg)
	if err != nil {
		return r, err
	}
	if f, ok := fams["go_memstats_heap_inuse_bytes"]; ok && len(f.GetMetric()) > 0 {
		r.APIServerHeapMiB = f.GetMetric()[0].GetGauge().GetValue() / (1 << 20)
	}
	if heap, err := managerHeapInuse(ctx, c.MetricsAddr, c.Token); err == nil {
		r.ManagerHeapMiB = heap / (1 << 20)
	}
	total, inUse, err := etcdDBSize(ctx, c.EtcdURL())
	r.EtcdDBMiB, r.EtcdDBInUseMiB = total/(1<<20), inUse/(1<<20)
	return r, err
}

// etcdDBSize reads etcd's database file size and the part of it in use from its metrics.
func etcdDBSize(ctx context.Context, etcdURL string) (total, inUse float64, err error) {
	if etcdURL == "" {
		return 0, 0, errors.New("etcd's URL is unknown")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(etcdURL, "/")+"/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	fams, err := parseMetrics(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	gauge := func(name string) (float64, error) {
		f, ok := fams[name]
		if !ok || len(f.GetMetric()) == 0 {
			return 0, fmt.Errorf("%s not in etcd's metrics", name)
		}
		return f.GetMetric()[0].GetGauge().GetValue(), nil
	}
	if total, err = gauge("etcd_mvcc_db_total_size_in_bytes"); err != nil {
		return 0, 0, err
	}
	inUse, err = gauge("etcd_mvcc_db_total_size_in_use_in_bytes")
	return total, inUse, err
}

// saveSessionObject saves the newest session as clients read it (managed fields included)
// under -profile-dir, to read what a session carries.
func saveSessionObject(ctx context.Context, dyn dynamic.Interface) error {
	if *profileDir == "" {
		return nil
	}
	list, err := dyn.Resource(sessionGVR).Namespace(scaleLongNS).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(list.Items) == 0 {
		return err
	}
	data, err := json.Marshal(list.Items[0].Object)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*profileDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*profileDir, "agentsessions.json"), data, 0o644)
}
