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

// Command bench is the harness behind `make bench`: it runs every registered suite and prints
// one JSON line per figure, then a summary table. Suites live one per file in this package.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	goruntime "runtime"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

// Figure is one measured number; Compare states one next to its baseline.
type Figure = benchfig.Figure

// Compare builds a figure that states value next to its baseline.
func Compare(name string, value, baseline float64, unit, target string) Figure {
	return benchfig.Compare(name, value, baseline, unit, target)
}

// suite measures one area and returns its figures.
type suite struct {
	name string
	run  func() ([]Figure, error)
}

var suites []suite

// register adds a suite; each suite file calls it from init.
func register(name string, run func() ([]Figure, error)) {
	suites = append(suites, suite{name: name, run: run})
}

func main() {
	only := flag.String("run", "", "regexp selecting suites by name (sandbox-pods runs real Pods under the cluster test's kubelet: root only, skipped otherwise)")
	cpuProfile := flag.String("cpuprofile", "", "write the bench process's CPU profile (the in-process suites) to this file")
	memProfile := flag.String("memprofile", "", "write the bench process's allocation profile (every allocation sampled) to this file")
	check := flag.Bool("check", false, "hold each figure to the bound its target states and exit 1 when one misses it (make bench-check)")
	followURL := flag.String(followersFlag, "", "run as the transcript suite's follower process of this history URL (the suite starts it)")
	flag.Parse()
	if *followURL != "" {
		if err := runFollowers(*followURL); err != nil {
			fmt.Fprintln(os.Stderr, "bench: followers:", err)
			os.Exit(1)
		}
		return
	}
	// The webhook suite calls controller-runtime directly; its logs are not figures.
	ctrllog.SetLogger(logr.Discard())
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		// Every allocation is sampled: the figure to read is the count per turn or request.
		goruntime.MemProfileRate = 1
		defer writeHeapProfile(*memProfile)
	}
	re := regexp.MustCompile(*only)
	sort.Slice(suites, func(i, j int) bool { return suites[i].name < suites[j].name })

	var all []Figure
	failed := false
	for _, s := range suites {
		if !re.MatchString(s.name) {
			continue
		}
		start := time.Now()
		figs, err := s.run()
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: suite %s failed after %s: %v\n", s.name, time.Since(start).Round(time.Millisecond), err)
			failed = true
			continue
		}
		// The load at the suite's end stands beside each of its figures.
		load := benchfig.LoadAverage()
		for i := range figs {
			figs[i].Load = load
			benchfig.Emit(os.Stdout, figs[i])
		}
		all = append(all, figs...)
	}

	fmt.Println()
	benchfig.Table(os.Stdout, all)
	if *check {
		fmt.Println()
		if !benchfig.CheckTable(os.Stdout, all) {
			fmt.Fprintln(os.Stderr, "bench: a figure missed its target")
			failed = true
		}
	}
	if failed {
		pprof.StopCPUProfile() // os.Exit skips the deferred stops
		if *memProfile != "" {
			writeHeapProfile(*memProfile)
		}
		os.Exit(1)
	}
}

// writeHeapProfile writes the allocation profile (alloc_space and alloc_objects since the
// start) for `go tool pprof -sample_index=alloc_objects`.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return
	}
	defer func() { _ = f.Close() }()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
}
