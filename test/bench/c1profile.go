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
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// c1ProfileSeconds is how long each of the profiled concurrency-1 windows is sampled.
const c1ProfileSeconds = 15

// profileC1 saves the API server's CPU profile while sends run one at a time, then while
// nulls do, and the manager's for the sends: the two API server profiles side by side say
// what a send costs it beyond the null's create and status update. It runs only with
// -profile-dir, after the figures are taken.
func profileC1(ctx context.Context, cfg *rest.Config, dyn dynamic.Interface) error {
	if *profileDir == "" {
		return nil
	}
	apiHTTP, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	api := strings.TrimSuffix(cfg.Host, "/")
	path := "/debug/pprof/profile?seconds=" + strconv.Itoa(c1ProfileSeconds)
	window := func(name string, run func(n int) error, saved ...<-chan struct{}) error {
		deadline := time.Now().Add((c1ProfileSeconds + 1) * time.Second)
		n := 0
		for time.Now().Before(deadline) {
			if err := run(n); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			n++
		}
		for _, ch := range saved {
			<-ch
		}
		fmt.Fprintf(os.Stderr, "bench: profiled %s: %d batches of %d\n", name, n, c1ProfileBatch)
		return nil
	}
	err = window("sends", func(n int) error {
		_, err := measureSends(ctx, dyn, c1ProfileBatch, 1, "c1prof"+strconv.Itoa(n))
		return err
	}, profile(apiHTTP, api, "apiserver-cpu-c1-send.pprof", path),
		profile(http.DefaultClient, managerProfiler(), "manager-cpu-c1-send.pprof", path))
	if err != nil {
		return err
	}
	return window("nulls", func(n int) error {
		_, err := measureNulls(ctx, dyn, c1ProfileBatch, 1, "c1prof"+strconv.Itoa(n))
		return err
	}, profile(apiHTTP, api, "apiserver-cpu-c1-null.pprof", path))
}

// c1ProfileBatch is how many objects a profiled window creates between deadline checks.
const c1ProfileBatch = 50
