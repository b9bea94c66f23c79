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
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

func init() {
	register("scale", benchScale)
}

const (
	scaleNS = "bench-scale"
	// scaleStep is the batch between two memory readings.
	scaleStep = 10000
)

// scaleObjects is how many sessions, and as many finished sends, the scale suite makes:
// 100,000, or BENCH_SCALE_OBJECTS.
func scaleObjects() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_SCALE_OBJECTS")); err == nil && n >= scaleStep {
		return n - n%scaleStep
	}
	return 100000
}

// scaleCluster is the scale suites' cluster: etcd without fsync, since at 100,000 objects
// the disk's flushes, not the manager, would set the pace (what the suites measure is the
// memory the manager and the store hold, which the disk does not change).
func scaleCluster(mgrArgs []string) devcluster.Options {
	return devcluster.Options{ManagerArgs: mgrArgs, EtcdNoFsync: true}
}

// withProfilers has the manager and the transcript-store serve /debug/pprof when the bench
// saves profiles (-profile-dir), at pprofAddr and storePprofAddr.
func withProfilers(o devcluster.Options) devcluster.Options {
	if *profileDir != "" {
		o.ManagerArgs = append(o.ManagerArgs, "--pprof-bind-address="+pprofAddr())
		o.StoreArgs = append(o.StoreArgs, "--pprof-bind-address="+storePprofAddr())
	}
	return o
}

var sessionGVR = sessionsv1alpha1.GroupVersion.WithResource("agentsessions")

// benchScale grows one namespace to 100,000 AgentSessions and 100,000 finished
// SessionSends, 10,000 of each at a time, reading the manager's and the transcript-store's
// memory after each step, then times sessions_list limit 50 over MCP there. Each session is
// initialized by the manager (a sessionId, a transcript file); each send is created with
// spec.cancel and finished Cancelled by the manager, so every object went through its
// controller without 100,000 model turns.
func benchScale() ([]Figure, error) {
	ctx := context.Background()
	c, _, cl, dyn, stop, err := clusterClientsWith(ctx, "bench-scale.log", withProfilers(scaleCluster(nil)), 1000)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scaleNS}}); err != nil {
		return nil, err
	}
	ready, err := countWhere(ctx, dyn, sessionGVR, scaleNS, statusSet("sessionId"))
	if err != nil {
		return nil, err
	}
	finished, err := countWhere(ctx, dyn, sendGVR, scaleNS, statusSet("completedAt"))
	if err != nil {
		return nil, err
	}

	total := scaleObjects()
	time.Sleep(10 * time.Second)
	mgr0, store0 := processRSSMiB(c.ManagerPID()), processRSSMiB(c.StorePID())
	fmt.Fprintf(os.Stderr, "bench: scale: empty: manager %.1f MiB, transcript-store %.1f MiB\n", mgr0, store0)
	var mgrAt, storeAt []float64
	start := time.Now()
	for done := 0; done < total; done += scaleStep {
		if err := createScaleBatch(ctx, cl, done, done+scaleStep); err != nil {
			return nil, err
		}
		want := done + scaleStep
		if err := ready.wait(want, 15*time.Minute); err != nil {
			return nil, fmt.Errorf("sessions initialized: %w", err)
		}
		if err := finished.wait(want, 15*time.Minute); err != nil {
			return nil, fmt.Errorf("sends finished: %w", err)
		}
		settle := 10 * time.Second
		if want == total {
			settle = rssSettle
		}
		time.Sleep(settle)
		mgrAt, storeAt = append(mgrAt, processRSSMiB(c.ManagerPID())), append(storeAt, processRSSMiB(c.StorePID()))
		inuse, _ := managerHeapInuse(ctx, c.MetricsAddr, c.Token)
		fmt.Fprintf(os.Stderr, "bench: scale: %dk sessions + %dk finished sends after %s: manager %.1f MiB (heap in use %.1f), transcript-store %.1f MiB\n",
			want/1000, want/1000, time.Since(start).Round(time.Second), mgrAt[len(mgrAt)-1], inuse/(1<<20), storeAt[len(storeAt)-1])
		// A profile per step, so a run stopped early still shows what grows.
		<-profile(http.DefaultClient, managerProfiler(), "manager-heap-"+strconv.Itoa(want/1000)+"k.pprof", "/debug/pprof/heap")
		<-profile(http.DefaultClient, "http://"+storePprofAddr(), "store-heap-"+strconv.Itoa(want/1000)+"k.pprof", "/debug/pprof/heap")
	}
	heap, heapErr := managerHeapInuse(ctx, c.MetricsAddr, c.Token)
	if heapErr != nil {
		return nil, fmt.Errorf("manager heap: %w", heapErr)
	}
	list, err := timeMCPList(ctx, c, scaleNS, 20)
	if err != nil {
		return nil, err
	}
	k := strconv.Itoa(total/1000) + "k"
	last := len(mgrAt) - 1
	perStep := func(at []float64) float64 {
		if last == 0 {
			return at[0]
		}
		return (at[last] - at[0]) / float64(last)
	}
	return []Figure{
		{Name: "manager_rss_" + k + "_mib", Value: mgrAt[last], Unit: "MiB",
			Target: "< 400 with " + k + " sessions + " + k + " finished sends (its 512Mi limit passed as the Deployment does; the runtime keeps under 60% of it, 307 MiB)"},
		{Name: "manager_rss_per_10k_mib", Value: perStep(mgrAt), Unit: "MiB",
			Target: fmt.Sprintf("growth per 10k sessions + 10k finished sends (%.1f MiB empty, %.1f at 10k)", mgr0, mgrAt[0])},
		{Name: "manager_heap_inuse_" + k + "_mib", Value: heap / (1 << 20), Unit: "MiB",
			Target: "heap spans in use behind manager_rss: live objects and garbage not yet collected"},
		{Name: "transcript_store_rss_" + k + "_mib", Value: storeAt[last], Unit: "MiB",
			Target: "< 256 (its limit, passed as the Deployment does; the runtime keeps under 192 MiB): its trimmed session cache and compact transcript index; no sends cached or watched (the manager hands their changes over)"},
		{Name: "transcript_store_rss_per_10k_mib", Value: perStep(storeAt), Unit: "MiB",
			Target: fmt.Sprintf("growth per 10k sessions + 10k finished sends (%.1f MiB empty, %.1f at 10k)", store0, storeAt[0])},
		{Name: "sessions_list_" + k + "_ms", Value: msOf(median(list)), Unit: "ms",
			Target: "< 50: sessions_list limit 50 over MCP in a namespace of " + k + " sessions, p50"},
	}, nil
}

// createScaleBatch creates sessions [from, to) and as many sends, each to be cancelled.
func createScaleBatch(ctx context.Context, cl client.Client, from, to int) error {
	return createScaleObjects(ctx, cl, scaleNS, from, to, true)
}

// createScaleObjects creates sessions [from, to) in namespace and, with sends, one send into
// each, to be cancelled.
func createScaleObjects(ctx context.Context, cl client.Client, namespace string, from, to int, sends bool) error {
	g, gctx := errgroup.WithContext(ctx)
	// 64 creates in flight: each waits on two webhook calls and an etcd write, so fewer
	// leave a loaded machine idle between them (the suites measure memory, not latency).
	g.SetLimit(64)
	for i := from; i < to; i++ {
		g.Go(func() error {
			key := "agent:bench:webchat:group:s" + strconv.Itoa(i)
			s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: namespace},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "bench", Channel: "webchat", ChatType: sessionsv1alpha1.ChatTypeGroup,
					DisplayName: "group " + strconv.Itoa(i)}}
			if err := createRetrying(gctx, cl, s); err != nil || !sends {
				return err
			}
			return createRetrying(gctx, cl, &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "scale-" + strconv.Itoa(i), Namespace: namespace},
				Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: "hello " + strconv.Itoa(i), TimeoutSeconds: ptr.To[int32](0), Cancel: true}})
		})
	}
	return g.Wait()
}

// createRetrying creates obj, trying again what a loaded machine makes fail for a while (a
// webhook call past its 5s timeout, a throttled or timed-out request), every 5 seconds for
// up to 10 minutes: one such failure must not end a run of 100,000. A create that landed
// before its answer was lost is found existing, and done.
func createRetrying(ctx context.Context, cl client.Client, obj client.Object) error {
	backoff := wait.Backoff{Duration: 5 * time.Second, Factor: 1, Jitter: 0.2, Steps: 120} // no Cap: reaching it ends the retries
	err := retry.OnError(backoff, func(err error) bool {
		return ctx.Err() == nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !apierrors.IsBadRequest(err)
	}, func() error { return cl.Create(ctx, obj) })
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
