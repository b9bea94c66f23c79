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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
)

func init() {
	register("shards", benchShards)
}

const (
	// nsPerShard namespaces of each of two shards, shardSessions sessions in each: one
	// closed-loop worker per session.
	nsPerShard    = 4
	shardSessions = 4
	shardWindow   = 30 * time.Second
	shardNSPrefix = "shard-ns-"
)

// shardTarget is one session a worker sends into.
type shardTarget struct {
	namespace, key string
	shard          int
}

// benchShards runs two managers as shards 0/2 and 1/2 of one API server, each with its own
// transcript-store: the sends/s of one shard working alone against both, that no namespace
// was worked on by both (its transcripts are on one shard's volume only), and what a SIGKILL
// of shard 1's manager does to either shard's sends.
func benchShards() ([]Figure, error) {
	ctx := context.Background()
	// Each store is the other's front: both addresses are known before either starts.
	addrs, err := devcluster.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	front := "--shard-url=https://" + addrs[0] + ",https://" + addrs[1]
	c, _, cl, dyn, stop, err := clusterClientsWith(ctx, "bench-shards.log", devcluster.Options{ManagerArgs: []string{"--shard=0/2"},
		StoreArgs: []string{"--shard=0/2", front}, HistoryAddr: addrs[0]}, 500)
	if err != nil {
		return nil, err
	}
	defer stop()
	// The counters watch from now on: they start before anything they count.
	ready, err := countWhere(ctx, dyn, sessionGVR, "", func(u *unstructured.Unstructured) bool {
		id, _, _ := unstructured.NestedString(u.Object, "status", "sessionId")
		return id != "" && strings.HasPrefix(u.GetNamespace(), shardNSPrefix)
	})
	if err != nil {
		return nil, err
	}
	finished, err := countWhere(ctx, dyn, sendGVR, "", statusSet("completedAt"))
	if err != nil {
		return nil, err
	}
	targets, err := shardFixtures(ctx, cl)
	if err != nil {
		return nil, err
	}
	var zero []shardTarget
	for _, t := range targets {
		if t.shard == 0 {
			zero = append(zero, t)
		}
	}
	if err := ready.wait(len(zero), 2*time.Minute); err != nil {
		return nil, fmt.Errorf("shard 0's sessions: %w", err)
	}

	// Shard 0 alone, on its namespaces.
	one := runShardLoad(ctx, cl, finished, zero, "alone", shardWindow, nil)
	if one.err != nil {
		return nil, one.err
	}
	s1, err := c.StartShard(ctx, "shard-1", devcluster.ShardOptions{ManagerArgs: []string{"--shard=1/2"},
		StoreArgs: []string{"--shard=1/2"}, HistoryAddr: addrs[1]})
	if err != nil {
		return nil, err
	}
	if err := ready.wait(len(targets), 2*time.Minute); err != nil {
		return nil, fmt.Errorf("shard 1's sessions: %w", err)
	}
	// Both shards, each on its own namespaces.
	two := runShardLoad(ctx, cl, finished, targets, "both", shardWindow, nil)
	if two.err != nil {
		return nil, two.err
	}
	overlap, err := namespacesOnBoth(targets, c.TranscriptDir(), s1.TranscriptDir())
	if err != nil {
		return nil, err
	}
	viaFront, direct, err := proxyOverhead(ctx, c, targets, s1.HistoryAddr)
	if err != nil {
		return nil, err
	}

	// Shard 1's manager is killed a third into the window and restarted at two thirds.
	var killedAt, restartedAt time.Time
	var restartErr error
	kill := runShardLoad(ctx, cl, finished, targets, "kill", shardWindow, func(elapsed time.Duration) {
		switch {
		case killedAt.IsZero() && elapsed >= shardWindow/3:
			s1.KillManager()
			killedAt = time.Now()
		case restartedAt.IsZero() && elapsed >= 2*shardWindow/3:
			restartErr = s1.RestartManager(ctx)
			restartedAt = time.Now()
		}
	})
	if kill.err != nil {
		return nil, kill.err
	}
	if restartErr != nil {
		return nil, restartErr
	}
	if killedAt.IsZero() || restartedAt.IsZero() {
		return nil, errors.New("the kill window did not open")
	}
	outage := restartedAt.Sub(killedAt).Seconds()
	before := killedAt.Sub(kill.start).Seconds()
	// A turn the killed manager had finished may still be written for a moment: count from
	// one second after the kill.
	during1 := kill.finishedIn(1, killedAt.Add(time.Second), restartedAt)
	var resume float64
	if first, ok := kill.firstAfter(1, restartedAt); ok {
		resume = first.Sub(restartedAt).Seconds()
	}

	perS := func(r *shardLoad) float64 { return float64(r.done) / r.window.Seconds() }
	return []Figure{
		{Name: "shards_one_sends_per_s", Value: perS(one), Unit: "sends/s",
			Target: fmt.Sprintf("shard 0 alone, %d closed-loop workers on its %d namespaces", len(zero), nsPerShard)},
		Compare("shards_two_sends_per_s", perS(two), perS(one), "sends/s",
			fmt.Sprintf("shards 0/2 and 1/2, %d workers on %d namespaces; one API server, so about 1x (docs/operations/scaling.md)", len(targets), 2*nsPerShard)),
		{Name: "shards_namespaces_on_both", Value: float64(overlap), Unit: "namespaces", Target: "0: no namespace's turns ran on both shards"},
		{Name: "shard_proxy_overhead_ms", Value: msOf(viaFront - direct), Unit: "ms",
			Target: fmt.Sprintf("history tail (limit 50) of a shard 1 session through shard 0's front (%.2f ms) against shard 1 directly (%.2f ms), p50: one hop",
				msOf(viaFront), msOf(direct))},
		Compare("shards_kill_other_shard_sends_per_s", float64(kill.finishedIn(0, killedAt, restartedAt))/outage,
			float64(kill.finishedIn(0, kill.start, killedAt))/before, "sends/s",
			"shard 0 while shard 1's manager is down, against shard 0 before the kill: about 1"),
		{Name: "shards_kill_killed_shard_sends_finished", Value: float64(during1), Unit: "sends",
			Target: fmt.Sprintf("0: shard 1's sends wait while its manager is down (%.0f s)", outage)},
		{Name: "shards_kill_resume_s", Value: resume, Unit: "s", Target: "restart of shard 1's manager to its first finished send"},
		{Name: "shards_kill_sends_lost", Value: float64(kill.lost), Unit: "sends", Target: "0: every send of the kill window finished"},
	}, nil
}

// proxyRounds is how many history tails proxyOverhead reads each way.
const proxyRounds = 200

// proxyOverhead reads the history tail of a shard 1 session through shard 0's store (the
// front passes it on) and from shard 1's store directly, alternating, and returns the
// medians.
func proxyOverhead(ctx context.Context, c *devcluster.Cluster, targets []shardTarget, owner string) (time.Duration, time.Duration, error) {
	i := slices.IndexFunc(targets, func(t shardTarget) bool { return t.shard == 1 })
	t := targets[i]
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(c.HistoryCAFile)
	if err != nil || !pool.AppendCertsFromPEM(pem) {
		return 0, 0, fmt.Errorf("history CA %s: %v", c.HistoryCAFile, err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	path := "/sessions/" + url.PathEscape(t.key) + "/history?limit=50&namespace=" + t.namespace
	tail := func(base string) (time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+c.Token)
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("history tail through %s: %s", base, resp.Status)
		}
		return time.Since(start), nil
	}
	var via, direct []time.Duration
	for range proxyRounds {
		v, err := tail(c.HistoryURL())
		if err != nil {
			return 0, 0, err
		}
		d, err := tail("https://" + owner)
		if err != nil {
			return 0, 0, err
		}
		via, direct = append(via, v), append(direct, d)
	}
	return median(via), median(direct), nil
}

// shardFixtures creates nsPerShard namespaces owned by each of two shards, an Agent that
// answers at once and shardSessions sessions in each.
func shardFixtures(ctx context.Context, cl client.Client) ([]shardTarget, error) {
	var targets []shardTarget
	owned := [2]int{}
	for i := 0; owned[0] < nsPerShard || owned[1] < nsPerShard; i++ {
		ns := shardNSPrefix + strconv.Itoa(i)
		s := shard.Of(ns, 2)
		if owned[s] == nsPerShard {
			continue
		}
		owned[s]++
		objs := []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{
				Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{{Match: ".", Reply: "ok"}}}}},
		}
		for j := range shardSessions {
			key := "agent:bench:webchat:group:w" + strconv.Itoa(j)
			objs = append(objs, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: ns},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "bench", ChatType: sessionsv1alpha1.ChatTypeGroup}})
			targets = append(targets, shardTarget{namespace: ns, key: key, shard: s})
		}
		for _, o := range objs {
			if err := cl.Create(ctx, o); err != nil {
				return nil, err
			}
		}
	}
	return targets, nil
}

// shardLoad is what one window of closed-loop sends did.
type shardLoad struct {
	start  time.Time
	window time.Duration
	done   int // finished within the window
	lost   int // created, and not finished two minutes after the window
	ends   []shardEnd
	err    error
}

type shardEnd struct {
	shard int
	at    time.Time
}

func (r *shardLoad) finishedIn(s int, from, to time.Time) int {
	n := 0
	for _, e := range r.ends {
		if e.shard == s && !e.at.Before(from) && e.at.Before(to) {
			n++
		}
	}
	return n
}

func (r *shardLoad) firstAfter(s int, t time.Time) (time.Time, bool) {
	var first time.Time
	for _, e := range r.ends {
		if e.shard == s && e.at.After(t) && (first.IsZero() || e.at.Before(first)) {
			first = e.at
		}
	}
	return first, !first.IsZero()
}

// runShardLoad runs one worker per target for window: each creates a person's send into
// its session and waits for it to finish before the next. tick, when set, is called about
// every 100 ms with the time since the start.
func runShardLoad(ctx context.Context, cl client.Client, finished *counter, targets []shardTarget, phase string,
	window time.Duration, tick func(time.Duration)) *shardLoad {
	r := &shardLoad{start: time.Now(), window: window}
	var mu sync.Mutex
	var created []string
	var failed atomic.Value
	var wg sync.WaitGroup
	for w, t := range targets {
		wg.Go(func() {
			for k := 0; time.Since(r.start) < window; k++ {
				name := fmt.Sprintf("%s-%d-%d", phase, w, k)
				send := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: t.namespace},
					Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: t.key, Message: "hello", TimeoutSeconds: ptr.To[int32](30)}}
				if err := cl.Create(ctx, send); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				mu.Lock()
				created = append(created, t.namespace+"/"+name)
				mu.Unlock()
				if !finished.waitKey(t.namespace+"/"+name, time.Minute) {
					return // counted as lost below
				}
			}
		})
	}
	if tick != nil {
		for time.Since(r.start) < window {
			tick(time.Since(r.start))
			time.Sleep(100 * time.Millisecond)
		}
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		r.err = err
		return r
	}
	end := r.start.Add(window)
	shardOf := map[string]int{}
	for _, t := range targets {
		shardOf[t.namespace] = t.shard
	}
	for _, key := range created {
		if !finished.waitKey(key, 2*time.Minute) {
			r.lost++
			continue
		}
		at, _ := finished.at(key)
		ns, _, _ := strings.Cut(key, "/")
		r.ends = append(r.ends, shardEnd{shard: shardOf[ns], at: at})
		if at.Before(end) {
			r.done++
		}
	}
	return r
}

// namespacesOnBoth counts the namespaces whose transcripts are in both shards' stores.
func namespacesOnBoth(targets []shardTarget, dirs ...string) (int, error) {
	seen := map[string]bool{}
	n := 0
	for _, t := range targets {
		if seen[t.namespace] {
			continue
		}
		seen[t.namespace] = true
		on := 0
		for _, d := range dirs {
			entries, err := os.ReadDir(filepath.Join(d, t.namespace))
			if err != nil && !os.IsNotExist(err) {
				return 0, err
			}
			if len(entries) > 0 {
				on++
			}
		}
		if on > 1 {
			n++
		}
	}
	return n, nil
}
