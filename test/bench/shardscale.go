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
	c, _, cl, dyn, stop, err := clusterClientsWith(ctx, "bench-shards-scale.log", scaleCluster([]string{"--shard=0/2"}), 1000)
	if err != nil {
		return nil, err
	}
	defer stop()
	s1, err := c.StartShard(ctx, "shard-1", devcluster.ShardOptions{ManagerArgs: []string{"--shard=1/2"}})
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
	pids := [2]func() int{c.ManagerPID, s1.ManagerPID}
	perShard := scaleObjects() / 2
	const step = scaleStep / 2
	var at [2][]float64
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
		for i := range pids {
			at[i] = append(at[i], processRSSMiB(pids[i]()))
		}
		fmt.Fprintf(os.Stderr, "bench: shards-scale: %dk sessions per shard after %s: shard 0 manager %.1f MiB, shard 1 manager %.1f MiB\n",
			(done+step)/1000, time.Since(start).Round(time.Second), at[0][len(at[0])-1], at[1][len(at[1])-1])
	}
	k := strconv.Itoa(perShard/1000) + "k"
	var figs []Figure
	for i := range at {
		last := len(at[i]) - 1
		growth := at[i][0]
		if last > 0 {
			growth = (at[i][last] - at[i][0]) / float64(last)
		}
		figs = append(figs,
			Figure{Name: fmt.Sprintf("shard%d_manager_rss_%s_each_mib", i, k), Value: at[i][last], Unit: "MiB",
				Target: fmt.Sprintf("shard %d of 2 with %s sessions in its namespaces and %s in the other shard's: about manager_rss of %s alone", i, k, k, k)},
			Figure{Name: fmt.Sprintf("shard%d_manager_rss_per_5k_mib", i), Value: growth, Unit: "MiB",
				Target: "growth per 5k sessions of its own (and 5k of the other shard's, which it does not cache)"})
	}
	return figs, nil
}
