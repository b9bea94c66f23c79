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
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
)

// profileDir, when set, makes the send suite save the manager's CPU profile of the sustained
// phase and its heap with the cache full, for `go tool pprof`.
var profileDir = flag.String("profile-dir", "", "save the manager's pprof profiles of the send suite here")

// pprofAddr is where the manager serves /debug/pprof when profiling (kube-apiserver serves
// it to the bench's admin credentials by default): a free port, so benches run side by side.
var pprofAddr = sync.OnceValue(func() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:6065"
	}
	defer l.Close()
	return l.Addr().String()
})

// storePprofAddr is the transcript-store's profiler address when profiling, as pprofAddr.
var storePprofAddr = sync.OnceValue(func() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:6066"
	}
	defer l.Close()
	return l.Addr().String()
})

// managerProfiler is the manager's profiler address.
func managerProfiler() string { return "http://" + pprofAddr() }

// profile fetches path from the profiler at base (with hc) into name under profileDir in
// the background; the channel closes when it is saved (at once when profiling is off). A
// failed fetch is reported, never fatal: the figures stand without it.
func profile(hc *http.Client, base, name, path string) <-chan struct{} {
	done := make(chan struct{})
	if *profileDir == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		if err := fetchProfile(hc, filepath.Join(*profileDir, name), base+path); err != nil {
			fmt.Fprintf(os.Stderr, "bench: profile %s: %v\n", name, err)
		}
	}()
	return done
}

func fetchProfile(hc *http.Client, file, url string) error {
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
