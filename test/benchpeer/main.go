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

// Command benchpeer is `make bench-peer`: our operator and OpenClaw's gateway on the same
// machine doing the same work, one JSON line per figure with OpenClaw as the baseline.
// ratio is ours over theirs for times and sizes and theirs over ours for rates, so below 1
// means ahead. Each figure stands alone: one that fails is reported and the rest go on.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

// figure is one comparison: it measures both systems and returns its figures.
type figure struct {
	name string
	run  func(ctx context.Context, p *peers) ([]benchfig.Figure, error)
}

var figures []figure

// figureOrder is the order figures run in.
var figureOrder = []string{"send", "history", "sse", "list"}

func register(name string, run func(ctx context.Context, p *peers) ([]benchfig.Figure, error)) {
	figures = append(figures, figure{name: name, run: run})
}

func main() {
	only := flag.String("run", "", "regexp selecting figures by name")
	keep := flag.Bool("keep", false, "keep the gateway's state and logs under the temp directory")
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	ctx := context.Background()
	work, err := os.MkdirTemp("", "bench-peer-")
	if err != nil {
		fatal(err)
	}
	if !*keep {
		defer os.RemoveAll(work)
	}
	began := time.Now()
	p, err := startPeers(ctx, work)
	if err != nil {
		fatal(err)
	}
	fmt.Fprintf(os.Stderr, "bench-peer: both systems up in %s\n", time.Since(began).Round(time.Second))
	defer p.stop()
	re := regexp.MustCompile(*only)
	// The send figure grows the session that history then reads.
	sort.SliceStable(figures, func(i, j int) bool {
		return slices.Index(figureOrder, figures[i].name) < slices.Index(figureOrder, figures[j].name)
	})
	var (
		mu      sync.Mutex
		all     []benchfig.Figure
		current string
	)
	// make bench-peer's time limit ends the run with SIGTERM: both systems stop with it, and
	// every figure measured so far is still printed in the table, with the one cut short named.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-sig
		mu.Lock()
		fmt.Fprintf(os.Stderr, "bench-peer: stopped by a signal during %s\n", current)
		fmt.Println()
		benchfig.Table(os.Stdout, all)
		mu.Unlock()
		p.stop()
		os.Exit(2)
	}()

	failed := 0
	for _, f := range figures {
		if !re.MatchString(f.name) {
			continue
		}
		mu.Lock()
		current = f.name
		mu.Unlock()
		start := time.Now()
		figs, err := f.run(ctx, p)
		load := benchfig.LoadAverage()
		mu.Lock()
		for i := range figs {
			figs[i].Load = load
			benchfig.Emit(os.Stdout, figs[i])
		}
		all = append(all, figs...)
		mu.Unlock()
		// Where the run's time goes, for the next BENCH_PEER_TIMEOUT.
		fmt.Fprintf(os.Stderr, "bench-peer: %s took %s\n", f.name, time.Since(start).Round(time.Second))
		if err != nil {
			failed++
			fmt.Fprintf(os.Stderr, "bench-peer: %s failed after %s: %v\n", f.name, time.Since(start).Round(time.Millisecond), err)
		}
	}
	fmt.Println()
	benchfig.Table(os.Stdout, all)
	fmt.Fprintf(os.Stderr, "bench-peer: logs and state in %s\n", filepath.Clean(work))
	if failed > 0 {
		p.stop()
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench-peer:", err)
	os.Exit(1)
}
