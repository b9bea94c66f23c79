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
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
)

func init() {
	register("shards-scale", benchShardsScale)
}

const shardScalePrefix = "shard-scale-"

// benchShardsScale runs two managers as shards 0/2 and 1/2 and grows one namespace of each
// to half of scaleObjects() sessions (50,000 each by default), 5,000 per shard at a time,
// reading both managers' memory after each step: each shard's informers hold only its own
// namespaces' sessions (shard.Label), so each manager's memory is that of half the sessions.
func benchShardsScale() ([]Figure, error) {
	ctx := context.Background()
	// Each store is told its shard, as a sharded install's are, so that its cache selects
	// its own namespaces' sessions (cacheindex.ReaderCacheOptions); each is the other's front.
	addrs, err := devcluster.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	front := "--shard-url=https://" + addrs[0] + ",https://" + addrs[1]
	o := scaleCluster([]string{"--shard=0/2"})
	o.StoreArgs, o.HistoryAddr = []string{"--shard=0/2", front}, addrs[0]
	c, _, cl, dyn, stop, err := clusterClientsWith(ctx, "bench-shards-scale.log", o, 1000)
	if err != nil {
		return nil, err
	}
	defer stop()
	s1, err := c.StartShard(ctx, "shard-1", devcluster.ShardOptions{ManagerArgs: []string{"--shard=1/2"},
		StoreArgs: []string{"--shard=1/2"}, HistoryAddr: addrs[1]})
	if err != nil {
		return nil, err
	}
	var namespaces [2]string
	for i := 0; namespaces[0] == "" || namespaces[1] == ""; i++ {
		if ns := shardScalePrefix + strconv.Itoa(i); namespaces[shard.Of(ns, 2)] == "" {
			namespaces[shard.Of(ns, 2)] = ns
		}
	}
	for _, ns := range namespaces {
		if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, err
		}
	}
	ready, err := countWhere(ctx, dyn, sessionGVR, "", func(u *unstructured.Unstructured) bool {
		id, _, _ := unstructured.NestedString(u.Object, "status", "sessionId")
		return id != "" && strings.HasPrefix(u.GetNamespace(), shardScalePrefix)
	})
	if err != nil {
		return nil, err
	}
	// What each step reads: both shards' manager and store, and the API server and etcd both
	// shards share.
	readers := []struct {
		name  string
		shard int // -1: shared
		pid   func() int
	}{
		{"manager", 0, c.ManagerPID}, {"store", 0, c.StorePID},
		{"manager", 1, s1.ManagerPID}, {"store", 1, s1.StorePID},
		{"apiserver", -1, func() int { return childPID("kube-apiserver") }},
		{"etcd", -1, func() int { return childPID("etcd") }},
	}
	perShard := scaleObjects() / 2
	const step = scaleStep / 2
	at := make([][]float64, len(readers))
	start := time.Now()
	for done := 0; done < perShard; done += step {
		for _, ns := range namespaces {
			if err := createScaleObjects(ctx, cl, ns, done, done+step, false); err != nil {
				return nil, err
			}
		}
		if err := ready.wait(2*(done+step), 15*time.Minute); err != nil {
			return nil, fmt.Errorf("sessions initialized: %w", err)
		}
		settle := 10 * time.Second
		if done+step == perShard {
			settle = rssSettle
		}
		time.Sleep(settle)
		line := fmt.Sprintf("bench: shards-scale: %dk sessions per shard after %s:", (done+step)/1000, time.Since(start).Round(time.Second))
		for i, r := range readers {
			at[i] = append(at[i], processRSSMiB(r.pid()))
			line += fmt.Sprintf(" %s %.1f", shardScaleLabel(r.name, r.shard), at[i][len(at[i])-1])
		}
		fmt.Fprintln(os.Stderr, line+" MiB")
	}
	k := strconv.Itoa(perShard/1000) + "k"
	all := strconv.Itoa(2*perShard/1000) + "k"
	var figs []Figure
	for i, r := range readers {
		last := at[i][len(at[i])-1]
		// The slope runs from the first reading to the last, so the process's fixed part
		// (binary, runtime, empty caches) does not count as growth.
		slope := 0.0
		if n := len(at[i]) - 1; n > 0 {
			slope = (last - at[i][0]) / float64(n*step) * 10000
		}
		if r.shard < 0 {
			figs = append(figs,
				Figure{Name: fmt.Sprintf("shard_%s_rss_%s_mib", r.name, all), Value: last, Unit: "MiB",
					Target: fmt.Sprintf("shared by both shards with %s sessions in all", all)},
				Figure{Name: fmt.Sprintf("shard_%s_rss_per_10k_mib", r.name), Value: slope, Unit: "MiB",
					Target: "growth per 10k sessions in all"})
			continue
		}
		shard := r.shard
		figs = append(figs,
			Figure{Name: fmt.Sprintf("shard_%s_rss_%s_mib", r.name, k), Shard: &shard, Value: last, Unit: "MiB",
				Target: fmt.Sprintf("< 300 (shard %d of 2 with %s sessions of its own and %s of the other shard's)", shard, k, k)},
			Figure{Name: fmt.Sprintf("shard_%s_rss_per_10k_mib", r.name), Shard: &shard, Value: slope, Unit: "MiB",
				Target: "growth per 10k sessions of its own (and 10k of the other shard's, which it does not cache)"})
	}
	return figs, nil
}

func shardScaleLabel(name string, shard int) string {
	if shard < 0 {
		return name
	}
	return fmt.Sprintf("shard %d %s", shard, name)
}
